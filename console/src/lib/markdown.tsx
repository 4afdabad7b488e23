// A small Markdown renderer for readmes (ADR 0032): a safe subset rendered to React elements, never
// to HTML strings, so nothing in a readme can inject markup or script. Supported: ATX headings,
// paragraphs, fenced code blocks, bullet and numbered lists, block quotes, horizontal rules,
// inline code, bold, italics and links (http, https and mailto only; images show as links).
// Raw HTML shows as text.
import type { ReactNode } from "react";

type Block =
  | { kind: "heading"; level: number; text: string }
  | { kind: "paragraph"; text: string }
  | { kind: "code"; text: string; language: string }
  | { kind: "list"; ordered: boolean; items: string[] }
  | { kind: "quote"; text: string }
  | { kind: "rule" };

/** Splits Markdown into blocks. */
export function parseBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = /^\s*(```|~~~)\s*([\w+-]*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(fence[1]!)) body.push(lines[i++]!);
      i++;
      blocks.push({ kind: "code", text: body.join("\n"), language: fence[2] ?? "" });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      blocks.push({ kind: "heading", level: heading[1]!.length, text: heading[2]! });
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blocks.push({ kind: "rule" });
      i++;
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1]!);
      const items: string[] = [];
      while (i < lines.length) {
        const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]!);
        if (m && /\d/.test(m[1]!) === ordered) items.push(m[2]!);
        else if (lines[i]!.trim() !== "" && /^\s{2,}/.test(lines[i]!) && items.length > 0)
          items[items.length - 1] += ` ${lines[i]!.trim()}`;
        else break;
        i++;
      }
      blocks.push({ kind: "list", ordered, items });
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i]!)) quoted.push(lines[i++]!.replace(/^\s*>\s?/, ""));
      blocks.push({ kind: "quote", text: quoted.join(" ") });
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const paragraph: string[] = [];
    while (
      i < lines.length &&
      lines[i]!.trim() !== "" &&
      !/^(#{1,6}\s|\s*(```|~~~)|\s*>|\s*([-*+]|\d+[.)])\s+)/.test(lines[i]!)
    ) {
      paragraph.push(lines[i++]!.trim());
    }
    blocks.push({ kind: "paragraph", text: paragraph.join(" ") });
  }
  return blocks;
}

/** A link target the console follows: http(s) and mailto absolute URLs only. */
export function safeHref(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return ["http:", "https:", "mailto:"].includes(parsed.protocol) ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

const INLINE =
  /(`+)([^`]+?)\1|!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_/g;

/** Inline Markdown as React nodes. */
export function renderInline(text: string, keyPrefix = ""): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let n = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const key = `${keyPrefix}${n++}`;
    if (m[2] !== undefined) out.push(<code key={key}>{m[2]}</code>);
    else if (m[4] !== undefined) {
      const href = safeHref(m[4]);
      const label = m[3] || m[4];
      out.push(
        href ? (
          <a key={key} href={href} rel="noopener noreferrer nofollow" target="_blank">
            {renderInline(label, `${key}-`)}
          </a>
        ) : (
          <span key={key}>{label}</span>
        ),
      );
    } else if (m[5] !== undefined || m[6] !== undefined)
      out.push(<strong key={key}>{renderInline(m[5] ?? m[6] ?? "", `${key}-`)}</strong>);
    else out.push(<em key={key}>{renderInline(m[7] ?? m[8] ?? "", `${key}-`)}</em>);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A readme, rendered from the safe subset; headings start at level `baseLevel` (h2 on a page with an h1). */
export function Markdown({ source, baseLevel = 2 }: { source: string; baseLevel?: number }) {
  return (
    <>
      {parseBlocks(source).map((block, i) => {
        const key = String(i);
        switch (block.kind) {
          case "heading": {
            const level = Math.min(6, block.level + baseLevel - 1);
            const Tag = `h${level}` as "h2";
            return <Tag key={key}>{renderInline(block.text)}</Tag>;
          }
          case "paragraph":
            return <p key={key}>{renderInline(block.text)}</p>;
          case "code":
            return (
              <pre key={key} className="command">
                <code>{block.text}</code>
              </pre>
            );
          case "list": {
            // biome-ignore lint/suspicious/noArrayIndexKey: a rendered readme never reorders
            const items = block.items.map((item, j) => <li key={`${key}-${j}`}>{renderInline(item)}</li>);
            return block.ordered ? <ol key={key}>{items}</ol> : <ul key={key}>{items}</ul>;
          }
          case "quote":
            return <blockquote key={key}>{renderInline(block.text)}</blockquote>;
          case "rule":
            return <hr key={key} />;
          default:
            return null;
        }
      })}
    </>
  );
}
