import { listAll } from "wharf/sdk";
import { firstItems } from "../../components/first-items";
import { TimeText } from "../../components/time-text";
import { pathWithUid } from "../../lib/format";
import { Link } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { Panel } from "./panel";

/** Most subscriptions looked through. */
const MAX_SUBSCRIPTIONS = 500;

/**
 * The organization's webhook subscriptions (its own and its folders') whose deliveries are failing:
 * dead letters (`status.failed`) or backing off after a failed attempt (`status.retryTime`).
 */
export function WebhooksPanel({ org }: { org: string }) {
  const client = useClient();
  const subs = useQuery(async () => {
    const all = await firstItems(
      listAll(client.events.subscriptions.listSubscriptions, { uidp: { descendantsOf: org } }),
      MAX_SUBSCRIPTIONS,
    );
    const failing = all.items.filter((s) => Number(s.status?.failed ?? 0n) > 0 || s.status?.retryTime);
    return { failing, checked: all.items.length, more: all.more };
  }, [client, org]);
  return (
    <Panel
      title="Failing webhooks"
      query={subs}
      deniedText="Listing webhooks needs the owner role in this organization."
    >
      {({ failing, checked, more }) =>
        failing.length === 0 ? (
          <p className="muted" data-testid="webhooks-ok">
            {checked === 0 ? "No webhook subscriptions." : `All ${checked} subscriptions are delivering.`}
          </p>
        ) : (
          <>
            <div className="table-wrap">
              <table>
                <caption className="visually-hidden">Subscriptions with failing deliveries</caption>
                <thead>
                  <tr>
                    <th scope="col">Sink</th>
                    <th scope="col" className="numeric">
                      Dead letters
                    </th>
                    <th scope="col" className="numeric">
                      Pending
                    </th>
                    <th scope="col">Next retry</th>
                  </tr>
                </thead>
                <tbody>
                  {failing.map((s) => (
                    <tr key={s.uid}>
                      <td className="mono">
                        <Link to={`${pathWithUid("/webhooks/deliveries", s.uid)}?state=all`}>{s.sink}</Link>
                      </td>
                      <td className="numeric">{Number(s.status?.failed ?? 0n)}</td>
                      <td className="numeric">{Number(s.status?.pending ?? 0n)}</td>
                      <td>
                        <TimeText value={s.status?.retryTime} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p className="muted">
              {failing.length} of {checked}
              {more ? "+" : ""} subscriptions failing.
            </p>
          </>
        )
      }
    </Panel>
  );
}
