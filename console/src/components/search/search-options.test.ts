import { describe, expect, it } from "vitest";
import { advisoryHref, advisoryIdOf, imageHref, repoHref, searchGroups } from "./search-options";

describe("search options", () => {
  it("recognises advisory ids in any case and spells them as stored", () => {
    expect(advisoryIdOf("cga-7Q2X-2345-6789")).toBe("CGA-7q2x-2345-6789");
    expect(advisoryIdOf("WGA-cfgh-jmpq-rvwx")).toBe("WGA-cfgh-jmpq-rvwx");
    expect(advisoryIdOf("CGA-0000-0000-0000")).toBeUndefined();
    expect(advisoryIdOf("GHSA-2345-6789-cfgh")).toBeUndefined();
    expect(advisoryIdOf("openssl")).toBeUndefined();
  });

  it("links each kind to the page that shows it", () => {
    expect(repoHref("a1/b2/c3")).toBe("/repos/a1/b2/c3");
    expect(repoHref("a1/c3", "v1.0+x")).toBe("/repos/a1/c3?tag=v1.0%2Bx");
    expect(imageHref("sha256:ab", "a1/c3")).toBe("/images/sha256%3Aab/a1/c3");
    expect(advisoryHref("CGA-7q2x-2345-6789")).toBe("/advisories?id=CGA-7q2x-2345-6789");
  });

  it("groups results in a fixed order and leaves out empty kinds", () => {
    const digest = `sha256:${"ab".repeat(32)}`;
    const groups = searchGroups(
      {
        repos: [],
        tags: [
          {
            tag: { uid: "o/r/t", name: "v1", digest },
            repoUid: "o/r",
            repoPath: "acme/web",
          },
        ],
        images: [{ digest, repoUid: "o/r", repoPath: "acme/web", tags: [] }],
      } as never,
      [{ uid: "u", advisoryId: "CGA-7q2x-2345-6789", artifactName: "openssl", aliases: ["CVE-1"] } as never],
    );
    expect(groups.map((g) => g.title)).toEqual(["Tags", "Images", "Advisories"]);
    expect(groups[0]?.options[0]).toMatchObject({ label: "acme/web:v1", href: "/repos/o/r?tag=v1" });
    expect(groups[1]?.options[0]).toMatchObject({
      label: "acme/web@sha256:abababababab",
      detail: "untagged",
    });
    expect(groups[2]?.options[0]).toMatchObject({ detail: "openssl · CVE-1" });
  });
});
