import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Link, matchPath, RouterProvider, useLocation } from "./router";

describe("matchPath", () => {
  it("matches literal segments and decodes variables", () => {
    expect(matchPath("/", "/")).toEqual({});
    expect(matchPath("/repos/:uid", "/repos/abc%2Fdef")).toEqual({ uid: "abc/def" });
    expect(matchPath("/repos/:uid/tags/:tag", "/repos/r1/tags/v1.0/")).toEqual({ uid: "r1", tag: "v1.0" });
  });

  it("refuses other literals and other lengths", () => {
    expect(matchPath("/repos/:uid", "/orgs/x")).toBeNull();
    expect(matchPath("/repos/:uid", "/repos")).toBeNull();
    expect(matchPath("/repos/:uid", "/repos/a/b")).toBeNull();
    expect(matchPath("/", "/anything")).toBeNull();
  });

  it("takes the rest of the path with a trailing *", () => {
    expect(matchPath("/images/:repo/*", "/images/r/sha256:ab/x")).toEqual({ repo: "r", "*": "sha256:ab/x" });
  });

  it("keeps a malformed escape as written instead of throwing", () => {
    expect(matchPath("/repos/:uid", "/repos/%E0%A4%A")).toEqual({ uid: "%E0%A4%A" });
  });
});

function Where() {
  const { pathname, search } = useLocation();
  return <output>{`${pathname}${search}`}</output>;
}

describe("RouterProvider and Link", () => {
  afterEach(() => {
    cleanup();
    window.history.replaceState(null, "", "/");
  });

  it("navigates on a plain click, pushing a history entry, and follows the back button", () => {
    render(
      <RouterProvider>
        <Link to="/orgs?page=2">Organizations</Link>
        <Where />
      </RouterProvider>,
    );
    expect(screen.getByRole("status").textContent).toBe("/");
    fireEvent.click(screen.getByRole("link", { name: "Organizations" }));
    expect(screen.getByRole("status").textContent).toBe("/orgs?page=2");
    expect(window.location.pathname).toBe("/orgs");
    act(() => {
      window.history.replaceState(null, "", "/");
      window.dispatchEvent(new PopStateEvent("popstate"));
    });
    expect(screen.getByRole("status").textContent).toBe("/");
  });

  it("leaves modified clicks (new tab) to the browser", () => {
    render(
      <RouterProvider>
        <Link to="/orgs">Organizations</Link>
        <Where />
      </RouterProvider>,
    );
    const link = screen.getByRole("link", { name: "Organizations" });
    expect(link.getAttribute("href")).toBe("/orgs");
    fireEvent.click(link, { ctrlKey: true });
    expect(screen.getByRole("status").textContent).toBe("/");
  });
});
