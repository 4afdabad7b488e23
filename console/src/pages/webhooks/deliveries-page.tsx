import { useState } from "react";
import type { events } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { EmptyState } from "../../components/empty-state";
import { Loading } from "../../components/loading";
import "../../components/panels.css";
import { TimeText } from "../../components/time-text";
import type { RouteParams } from "../../lib/route-params";
import { Link, useNavigate, useSearchParams } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";

/** The states the list can show: the dead letters, those still owed, or both. */
const STATES = [
  { value: "failed", label: "Failed (dead letters)" },
  { value: "pending", label: "Pending" },
  { value: "", label: "Pending and failed" },
] as const;

/** Parent group of a child uidp (`<group>/<16 hex>`). */
function parentOf(uid: string): string {
  return uid.slice(0, Math.max(0, uid.lastIndexOf("/")));
}

/**
 * `/webhooks/deliveries/<subscription uid>?state=failed|pending|all`: the deliveries a
 * subscription still owes and those given up on (dead letters), oldest first, a page at a time.
 */
export default function DeliveriesPage(params: RouteParams) {
  const uid = params["*"] ?? "";
  const client = useClient();
  const navigate = useNavigate();
  const search = useSearchParams();
  const stateParam = search.get("state");
  const state = stateParam === "all" ? "" : (stateParam ?? "failed");
  const subscription = useQuery(() => client.events.subscriptions.getSubscription({ uid }), [client, uid]);
  const [pageToken, setPageToken] = useState("");
  const [earlier, setEarlier] = useState<events.Delivery[]>([]);
  const page = useQuery(
    () =>
      client.events.subscriptions.listDeliveries({ subscriptionUid: uid, state, pageSize: 50, pageToken }),
    [client, uid, state, pageToken],
  );
  const rows = [...earlier, ...(page.data?.deliveries ?? [])];
  const group = parentOf(uid);
  const choose = (next: string) => {
    setEarlier([]);
    setPageToken("");
    navigate(`/webhooks/deliveries/${uid}?state=${next === "" ? "all" : next}`, { replace: true });
  };
  return (
    <main id="main">
      <h1>Deliveries</h1>
      <p className="muted">
        <Link to={`/webhooks/${group}`}>Back to the subscriptions</Link>
      </p>
      <ApiError error={subscription.error} />
      {subscription.data && (
        <dl className="facts">
          <dt>Sink</dt>
          <dd className="mono">{subscription.data.sink}</dd>
          <dt>Pending</dt>
          <dd>{String(subscription.data.status?.pending ?? 0n)}</dd>
          <dt>Failed</dt>
          <dd>{String(subscription.data.status?.failed ?? 0n)}</dd>
        </dl>
      )}
      <div className="field">
        <label htmlFor="delivery-state">Show</label>
        <select id="delivery-state" value={state} onChange={(e) => choose(e.target.value)}>
          {STATES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      {page.loading && !page.data && <Loading what="Loading deliveries" />}
      <ApiError error={page.error} />
      {page.data && rows.length === 0 && (
        <EmptyState title={state === "failed" ? "No dead letters" : "Nothing owed"}>
          <p>
            Every event so far reached the sink{state === "failed" ? " or is still being retried" : ""}.
            Failed deliveries stay here after the retry limit, so you can see what the sink missed.
          </p>
        </EmptyState>
      )}
      {rows.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Deliveries of the subscription</caption>
            <thead>
              <tr>
                <th scope="col">State</th>
                <th scope="col">Event</th>
                <th scope="col">Event time</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Last answer</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.uid}>
                  <td>
                    <span className={d.state === "failed" ? "badge danger" : "badge warn"}>{d.state}</span>
                  </td>
                  <td>
                    <code>{d.eventType}</code>
                    <div className="caps mono">{d.eventSubject}</div>
                  </td>
                  <td>
                    <TimeText value={d.eventTime} />
                  </td>
                  <td>{String(d.attempts)}</td>
                  <td>
                    <TimeText value={d.lastAttemptTime} />
                  </td>
                  <td>
                    {d.lastStatus > 0 ? `HTTP ${d.lastStatus}` : "no response"}
                    {d.lastError && <div className="caps">{d.lastError}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page.data?.nextPageToken && (
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setEarlier(rows);
            setPageToken(page.data?.nextPageToken ?? "");
          }}
        >
          Show more
        </button>
      )}
    </main>
  );
}
