import { useState } from "react";
import { listAll } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { GroupChoice } from "../../components/group-choice";
import "../../components/panels.css";
import { ResourceList } from "../../components/resource-list";
import { TimeText } from "../../components/time-text";
import { useSubmit } from "../../components/use-submit";
import type { RouteParams } from "../../lib/route-params";
import { Link } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";

const MAX_SUBSCRIPTIONS = 200;

/**
 * `/webhooks/<group uid>`: the group's webhook subscriptions with how delivery stands (pending,
 * failed), create with a sink URL, delete. Without a group: a group chooser.
 */
export default function WebhooksPage(params: RouteParams) {
  const group = params["*"] ?? "";
  if (!group) {
    return (
      <main id="main">
        <h1>Webhooks</h1>
        <GroupChoice basePath="/webhooks" purpose="to manage its webhooks" />
      </main>
    );
  }
  return <Subscriptions group={group} />;
}

function Subscriptions({ group }: { group: string }) {
  const client = useClient();
  const info = useQuery(() => client.iam.groups.getGroup({ uid: group }), [client, group]);
  const subs = useQuery(
    () =>
      firstItems(
        listAll(client.events.subscriptions.listSubscriptions, { uidp: { childrenOf: group } }),
        MAX_SUBSCRIPTIONS,
      ),
    [client, group],
  );
  return (
    <main id="main">
      <h1>Webhooks: {info.data?.name ?? group}</h1>
      <p className="muted">
        Group <code>{group}</code> · <Link to={`/access/${group}`}>Access</Link> ·{" "}
        <Link to="/webhooks">Other groups</Link>
      </p>
      <p>
        A subscription receives every event of this group and the groups under it (creates, updates, deletes,
        pushes and pulls) as signed CloudEvents.
      </p>
      <ApiError error={info.error} />
      <h2>Subscriptions</h2>
      <p>
        <button type="button" className="secondary" onClick={subs.reload} disabled={subs.loading}>
          {subs.loading ? "Refreshing…" : "Refresh"}
        </button>
      </p>
      <ResourceList
        query={subs}
        what="subscriptions"
        columns={["Sink", "Created", "Pending", "Failed", "Next retry", "Actions"]}
        empty={
          <EmptyState title="No subscriptions">
            <p>
              Add your endpoint's URL below; it receives a first event (the subscription's creation) right
              away.
            </p>
          </EmptyState>
        }
        row={(s) => (
          <tr key={s.uid}>
            <td className="mono">{s.sink}</td>
            <td>
              <TimeText value={s.createTime} />
            </td>
            <td data-testid="pending">{String(s.status?.pending ?? 0n)}</td>
            <td data-testid="failed">
              {s.status && s.status.failed > 0n ? (
                <span className="badge danger">{String(s.status.failed)}</span>
              ) : (
                "0"
              )}
            </td>
            <td>
              <TimeText value={s.status?.retryTime} />
            </td>
            <td className="actions">
              <Link to={`/webhooks/deliveries/${s.uid}`} aria-label={`Deliveries of ${s.sink}`}>
                Deliveries
              </Link>{" "}
              <ConfirmDelete
                what={`subscription to ${s.sink}`}
                onConfirm={() => client.events.subscriptions.deleteSubscription({ uid: s.uid })}
                onDeleted={subs.reload}
              />
            </td>
          </tr>
        )}
      />
      <CreateSubscriptionForm group={group} onCreated={subs.reload} />
    </main>
  );
}

function CreateSubscriptionForm({ group, onCreated }: { group: string; onCreated: () => void }) {
  const client = useClient();
  const [sink, setSink] = useState("");
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    await client.events.subscriptions.createSubscription({
      parent: group,
      subscription: { sink: sink.trim() },
    });
    setSink("");
    onCreated();
  });
  return (
    <section className="card form-card" aria-labelledby="create-subscription-heading">
      <h3 id="create-subscription-heading">Add a subscription</h3>
      <form onSubmit={onSubmit}>
        <TextField
          label="Sink URL"
          field="sink"
          type="url"
          error={submit.error}
          value={sink}
          onChange={(e) => setSink(e.target.value)}
          placeholder="https://hooks.example.com/wharf"
          hint="An https URL your endpoint answers with 2xx; verify each delivery's signature."
          required
        />
        <ApiError error={submit.error} shownFields={["sink"]} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Adding…" : "Add subscription"}
        </button>
      </form>
    </section>
  );
}
