import { useId } from "react";

/**
 * One "used of limit" line: a `<meter>` (when there is a limit) and the same in words, e.g.
 * "1.2 MB of 10 MB (12 %)" or "3 repos, no limit".
 */
export function UsageMeter({
  label,
  used,
  limit,
  format,
}: {
  label: string;
  used: bigint;
  /** 0n: unlimited. */
  limit: bigint;
  format: (n: bigint) => string;
}) {
  const id = useId();
  const percent = limit > 0n ? Number((used * 1000n) / limit) / 10 : undefined;
  const text =
    percent === undefined
      ? `${format(used)}, no limit`
      : `${format(used)} of ${format(limit)} (${percent} %)`;
  const level = percent === undefined ? "" : percent >= 100 ? "over" : percent >= 80 ? "near" : "";
  return (
    <div className="usage-line">
      <span id={`${id}-label`} className="usage-label">
        {label}
      </span>
      {percent !== undefined && (
        <meter
          aria-labelledby={`${id}-label`}
          aria-describedby={`${id}-text`}
          min={0}
          max={Number(limit)}
          low={Number(limit) * 0.8}
          high={Number(limit) * 0.95}
          optimum={0}
          value={Number(used)}
        />
      )}
      <span id={`${id}-text`} className={`usage-text ${level}`} data-testid={`usage-${label.toLowerCase()}`}>
        {text}
      </span>
    </div>
  );
}
