import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

/** A protobuf timestamp as a `<time>`: local date and time, ISO in `dateTime`; "—" when unset. */
export function TimeText({ value }: { value: Timestamp | undefined }) {
  if (!value) return <span className="muted">—</span>;
  const date = timestampDate(value);
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {date.toLocaleString()}
    </time>
  );
}
