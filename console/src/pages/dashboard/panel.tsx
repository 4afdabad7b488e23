import type { ReactNode } from "react";
import { Code, isWharfApiError } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { Loading } from "../../components/loading";
import type { Query } from "../../lib/use-query";

/**
 * One panel of the dashboard: a titled section that shows "loading" until its own query answers,
 * then `children(data)`. It fails on its own: a PERMISSION_DENIED shows `deniedText` (what role the
 * panel needs) instead of an error, any other error the server's structured error.
 */
export function Panel<T>({
  title,
  query,
  deniedText,
  wide = false,
  children,
}: {
  title: string;
  query: Query<T>;
  /** Shown instead of the error when the caller lacks the panel's capability. */
  deniedText: string;
  /** Spans the whole width of the dashboard's grid. */
  wide?: boolean;
  children: (data: T) => ReactNode;
}) {
  const id = `panel-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  const denied = isWharfApiError(query.error) && query.error.code === Code.PermissionDenied;
  return (
    <section className={`dashboard-panel${wide ? " wide" : ""}`} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {query.loading && !query.data && !query.error && <Loading what={`Loading ${title.toLowerCase()}`} />}
      {denied ? <p className="muted panel-denied">{deniedText}</p> : <ApiError error={query.error} />}
      {query.data !== undefined && !query.error && children(query.data)}
    </section>
  );
}
