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
    <div className="table-wrap">
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
              <td className="mono">{t.repo}</td>
              <td className="mono">{t.name}</td>
              <td className="mono" title={t.digest}>
                {shortDigest(t.digest)}
              </td>
              <td>{t.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
