import { formatBytes } from "../../lib/format";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { Panel } from "./panel";

/** Share of the quota from which the bar warns (the server's quota warning event fires at 80 %). */
const NEAR_QUOTA = 0.8;

/** Stored bytes against the organization's storage quota, and repos against the repo quota. */
export function StoragePanel({ org }: { org: string }) {
  const client = useClient();
  const usage = useQuery(() => client.registry.quotas.getUsage({ groupUid: org }), [client, org]);
  return (
    <Panel title="Storage" query={usage} deniedText="Reading usage needs a role in this organization.">
      {(u) => {
        const used = Number(u.storageBytes ?? 0n);
        const quota = Number(u.quota?.storageBytes ?? 0n);
        const repoQuota = Number(u.quota?.repoCount ?? 0n);
        const share = quota > 0 ? used / quota : 0;
        const level = share >= 1 ? "over" : share >= NEAR_QUOTA ? "near" : "";
        return (
          <>
            <p className="dashboard-figure" data-testid="storage-used">
              {formatBytes(used)}
            </p>
            {quota > 0 ? (
              <>
                <div className={`usage-bar ${level}`} aria-hidden="true">
                  <span style={{ width: `${Math.min(100, share * 100).toFixed(1)}%` }} />
                </div>
                <p data-testid="storage-quota">
                  {Math.round(share * 100)} % of the {formatBytes(quota)} quota
                  {level === "over" && <strong> (over quota: pushes are refused)</strong>}
                  {level === "near" && <strong> (near the quota)</strong>}
                </p>
              </>
            ) : (
              <p data-testid="storage-quota">No storage quota (unlimited).</p>
            )}
            <p className="muted">
              {Number(u.repoCount ?? 0n)} repos{repoQuota > 0 ? ` of ${repoQuota} allowed` : ""},{" "}
              {Number(u.tagCount ?? 0n)} tags
            </p>
          </>
        );
      }}
    </Panel>
  );
}
