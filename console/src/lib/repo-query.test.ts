import { describe, expect, it } from "vitest";
import { matchingNames, parseRepoQuery, repoQueryString } from "./repo-query";

describe("the repository list's query", () => {
  it("reads the URL with defaults for missing or bad values", () => {
    expect(parseRepoQuery(new URLSearchParams(""))).toEqual({ search: "", sort: "name asc", page: 0 });
    expect(parseRepoQuery(new URLSearchParams("q=%20app%20&sort=update_time+desc&page=3"))).toEqual({
      search: "app",
      sort: "update_time desc",
      page: 2,
    });
    expect(parseRepoQuery(new URLSearchParams("sort=drop+table&page=-4"))).toEqual({
      search: "",
      sort: "name asc",
      page: 0,
    });
  });

  it("writes it back without defaults, so it round-trips", () => {
    expect(repoQueryString({ search: "", sort: "name asc", page: 0 })).toBe("");
    const query = { search: "api", sort: "create_time desc", page: 1 };
    expect(repoQueryString(query)).toBe("?q=api&sort=create_time+desc&page=2");
    expect(parseRepoQuery(new URLSearchParams(repoQueryString(query)))).toEqual(query);
  });

  it("matches names by substring, ignoring case", () => {
    const repos = [{ name: "api" }, { name: "web-app" }, { name: "APP-tools" }];
    expect(matchingNames(repos, "app").map((r) => r.name)).toEqual(["web-app", "APP-tools"]);
    expect(matchingNames(repos, "")).toHaveLength(3);
  });
});
