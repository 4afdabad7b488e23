import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Markdown, parseBlocks, safeHref } from "./markdown";

afterEach(cleanup);

describe("the readme renderer", () => {
  it("renders headings, paragraphs, lists, code and inline marks", () => {
    const { container } = render(
      <Markdown
        source={
          "# App\n\nRun **fast** and *safe* with `docker`.\n\n- one\n- two\n\n1. first\n2. second\n\n```sh\ndocker pull x\n```\n> note"
        }
      />,
    );
    expect(container.querySelector("h2")?.textContent).toBe("App");
    expect(container.querySelector("strong")?.textContent).toBe("fast");
    expect(container.querySelector("em")?.textContent).toBe("safe");
    expect(container.querySelector("p code")?.textContent).toBe("docker");
    expect([...container.querySelectorAll("ul li")].map((li) => li.textContent)).toEqual(["one", "two"]);
    expect([...container.querySelectorAll("ol li")].map((li) => li.textContent)).toEqual(["first", "second"]);
    expect(container.querySelector("pre code")?.textContent).toBe("docker pull x");
    expect(container.querySelector("blockquote")?.textContent).toBe("note");
  });

  it("shows raw HTML as text and never creates script, image or handler elements", () => {
    const hostile =
      '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n![pixel](https://tracker.example/p.png)\n\n[click](javascript:alert(3)) [data](data:text/html,hi)';
    const { container } = render(<Markdown source={hostile} />);
    expect(container.querySelector("script, img, iframe, [onerror]")).toBeNull();
    expect(container.textContent).toContain("<script>alert(1)</script>");
    const hrefs = [...container.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    expect(hrefs).toEqual(["https://tracker.example/p.png"]);
    expect(container.textContent).toContain("click");
  });

  it("links only http, https and mailto, opening them apart from the console", () => {
    expect(safeHref("https://example.com/a")).toBe("https://example.com/a");
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
    expect(safeHref("javascript:alert(1)")).toBeUndefined();
    expect(safeHref("/relative")).toBeUndefined();
    const { container } = render(<Markdown source="[docs](https://example.com)" />);
    const a = container.querySelector("a");
    expect(a?.getAttribute("rel")).toContain("noopener");
    expect(a?.getAttribute("target")).toBe("_blank");
  });

  it("keeps an unclosed code fence as code to the end", () => {
    expect(parseBlocks("```\ncode\nmore")).toEqual([{ kind: "code", text: "code\nmore", language: "" }]);
  });
});
