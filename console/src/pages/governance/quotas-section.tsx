import { useState } from "react";
import { formatBytes, type registry } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { Loading } from "../../components/loading";
import { useSubmit } from "../../components/use-submit";
import { useQuery } from "../../lib/use-query";
import { useClient, useWharf } from "../../lib/wharf-context";
import { parseByteSize, parseCount } from "./byte-size-input";
import { UsageMeter } from "./usage-meter";

const count = (n: bigint) => n.toLocaleString("en");

/**
 * What a group stores (storage, repos, tags) against its organization's quota. The platform
 * administrator can set or clear an organization's quota; everyone else sees it read-only.
 */
export default function QuotasSection({ group }: { group: string }) {
  const client = useClient();
  const { me } = useWharf();
  const usage = useQuery(() => client.registry.quotas.getUsage({ groupUid: group }), [client, group]);
  const isOrganization = !group.includes("/");
  return (
    <section aria-labelledby="quotas-heading">
      <h2 id="quotas-heading">Usage and quota</h2>
      {usage.loading && !usage.data && <Loading what="Loading usage" />}
      <ApiError error={usage.error} />
      {usage.data && <UsageSummary usage={usage.data} />}
      {usage.data &&
        (me?.admin && isOrganization ? (
          <QuotaForm group={group} quota={usage.data.quota} onSaved={usage.reload} />
        ) : (
          <p className="muted" data-testid="quota-read-only">
            {isOrganization
              ? "Only the platform administrator can change this organization's quota."
              : "Quotas are set per organization: open the organization to see or change its quota."}
          </p>
        ))}
    </section>
  );
}

function UsageSummary({ usage }: { usage: registry.Usage }) {
  return (
    <div className="card usage" data-testid="usage">
      <UsageMeter
        label="Storage"
        used={usage.storageBytes ?? 0n}
        limit={usage.quota?.storageBytes ?? 0n}
        format={formatBytes}
      />
      <UsageMeter
        label="Repos"
        used={usage.repoCount ?? 0n}
        limit={usage.quota?.repoCount ?? 0n}
        format={count}
      />
      <div className="usage-line">
        <span className="usage-label">Tags</span>
        <span className="usage-text" data-testid="usage-tags">
          {count(usage.tagCount ?? 0n)}
        </span>
      </div>
      <p className="muted">
        Storage counts each distinct manifest and blob once, however many repos or tags share it, until
        garbage collection removes it.
      </p>
    </div>
  );
}

const limitText = (n: bigint | undefined, format: (n: bigint) => string) =>
  n && n > 0n ? format(n) : "unlimited";

const asText = (n: bigint | undefined) => (n && n > 0n ? String(n) : "");

function QuotaForm({
  group,
  quota,
  onSaved,
}: {
  group: string;
  quota: registry.Quota | undefined;
  onSaved: () => void;
}) {
  const client = useClient();
  const [storage, setStorage] = useState(asText(quota?.storageBytes));
  const [repos, setRepos] = useState(asText(quota?.repoCount));
  const [saved, setSaved] = useState("");
  const submit = useSubmit();
  const save = (storageBytes: bigint | undefined, repoCount: bigint | undefined, done: string) =>
    submit.handler(async () => {
      setSaved("");
      if (storageBytes === undefined)
        throw new Error(`"${storage}" is not a size (e.g. 500 MiB, 10 GB, or bytes)`);
      if (repoCount === undefined) throw new Error(`"${repos}" is not a whole number of repos`);
      await client.registry.quotas.updateQuota({ groupUid: group, storageBytes, repoCount });
      setSaved(done);
      onSaved();
    });
  const onSubmit = save(parseByteSize(storage), parseCount(repos), "Quota saved.");
  const onClear = save(0n, 0n, "Quota cleared: no limits.");
  return (
    <section className="card form-card" aria-labelledby="quota-form-heading">
      <h3 id="quota-form-heading">Set the quota</h3>
      <form onSubmit={onSubmit}>
        <TextField
          label="Storage quota"
          field="storage_bytes"
          error={submit.error}
          value={storage}
          onChange={(e) => setStorage(e.target.value)}
          hint={`Bytes, or with a unit: 500 MiB, 10 GB. Empty or 0: unlimited. Now: ${limitText(quota?.storageBytes, formatBytes)}.`}
        />
        <TextField
          label="Repo quota"
          field="repo_count"
          error={submit.error}
          value={repos}
          inputMode="numeric"
          onChange={(e) => setRepos(e.target.value)}
          hint={`Most repos the organization may hold. Empty or 0: unlimited. Now: ${limitText(quota?.repoCount, count)}.`}
        />
        <ApiError error={submit.error} shownFields={["storage_bytes", "repo_count"]} />
        <div className="button-row">
          <button type="submit" disabled={submit.busy}>
            Save quota
          </button>
          <button
            type="button"
            className="secondary"
            disabled={submit.busy}
            onClick={(e) => {
              setStorage("");
              setRepos("");
              onClear(e);
            }}
          >
            Clear quota
          </button>
        </div>
        <p role="status" aria-live="polite" className="ok-text">
          {saved}
        </p>
      </form>
    </section>
  );
}
