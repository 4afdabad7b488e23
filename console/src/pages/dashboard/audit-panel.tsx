import { formatAgo, formatTime } from "../../lib/format";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { Panel } from "./panel";

/** Records shown: the newest of the organization and its folders and repos. */
const AUDIT_ROWS = 10;

/** An RPC's full name as people read it: `platform.registry.v2.ReposService/DeleteRepo` → `ReposService/DeleteRepo`. */
function shortAction(action: string): string {
  const slash = action.lastIndexOf("/");
  if (slash < 0) return action;
  const service = action.slice(0, slash).split(".").at(-1);
  return `${service}/${action.slice(slash + 1)}`;
}

/** The organization's newest audit records (capability audit.list: owners only). */
export function AuditPanel({ org }: { org: string }) {
  const client = useClient();
  const records = useQuery(
    () => client.audit.log.listRecords({ uidp: { descendantsOf: org }, pageSize: AUDIT_ROWS }),
    [client, org],
  );
  return (
    <Panel
      title="Recent audit records"
      query={records}
      wide
      deniedText="Reading the audit log needs the owner role (audit.list) in this organization."
    >
      {({ records: rows }) =>
        rows.length === 0 ? (
          <p className="muted">No audit records yet.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">The newest audit records</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Resource</th>
                  <th scope="col">Result</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.uid}>
                    <td title={formatTime(r.time)}>{formatAgo(r.time)}</td>
                    <td className="mono">{r.actor?.identity || "anonymous"}</td>
                    <td className="mono">{shortAction(r.action)}</td>
                    <td className="mono">{r.resource}</td>
                    <td>
                      <span className={`badge ${r.result?.code === "OK" ? "ok" : "danger"}`}>
                        {r.result?.code}
                      </span>{" "}
                      {r.result?.reason}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Panel>
  );
}
