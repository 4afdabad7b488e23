import type { registry } from "wharf/sdk";
import { shortDigest } from "../../lib/format";

/** The tags a retention run deletes (or deleted): repo, tag, digest and why no rule keeps it. */
export function RetentionTagsTable({
  caption,
  tags,
}: {
  caption: string;
  tags: readonly registry.RetentionTag[];
}) {
  return (
    // Focusable, so that a keyboard can scroll it when long values overflow a narrow screen.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus (WCAG 2.1.1).
    <section className="table-wrap" tabIndex={0} aria-label={caption}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Repo</th>
            <th scope="col">Tag</th>
            <th scope="col">Digest</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {tags.map((t) => (
            <tr key={t.uid}>
              <td className="mono nowrap">{t.repo}</td>
              <td className="mono nowrap">{t.name}</td>
              <td className="mono nowrap" title={t.digest}>
                {shortDigest(t.digest)}
              </td>
              <td>{t.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
