import { useState } from "react";
import { listAll } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import { SecretOnce } from "../../components/secret-once";
import { SelectField } from "../../components/select-field";
import { TimeText } from "../../components/time-text";
import { useSubmit } from "../../components/use-submit";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { PULL_TOKEN_LIFETIMES } from "./lifetimes";
import { type CreatedPullToken, createPullToken, isPullToken, revokePullToken } from "./pull-token";

const MAX_IDENTITIES = 500;

/** The organization's pull tokens (registry Basic credentials that may only pull); the password is shown once. */
export default function PullTokensSection({ group }: { group: string }) {
  const client = useClient();
  const tokens = useQuery(async () => {
    const all = await firstItems(
      listAll(client.iam.identities.listIdentities, { uidp: { childrenOf: group } }),
      MAX_IDENTITIES,
    );
    return { items: all.items.filter(isPullToken), more: all.more };
  }, [client, group]);
  const [created, setCreated] = useState<CreatedPullToken>();
  return (
    <section aria-labelledby="pull-tokens-heading">
      <h2 id="pull-tokens-heading">Pull tokens</h2>
      <p className="muted">
        A pull token is a username and password for <code>docker login</code> that may only pull from this
        group's repositories, until it expires or is revoked.
      </p>
      {created && (
        <SecretOnce
          title="Pull token created"
          label="Password"
          value={created.password}
          onDone={() => setCreated(undefined)}
        >
          <dl className="facts">
            <dt>Username</dt>
            <dd>
              <code data-testid="pull-token-username">{created.username}</code>
            </dd>
            <dt>Expires</dt>
            <dd>{new Date(created.expiry).toLocaleString()}</dd>
          </dl>
          <pre className="mono">
            docker login {new URL(created.registryUrl).host} --username '{created.username}' --password-stdin
          </pre>
        </SecretOnce>
      )}
      <ResourceList
        query={tokens}
        what="pull tokens"
        columns={["Name", "Username", "Expires", "Actions"]}
        empty={
          <EmptyState title="No pull tokens">
            <p>Create one below for a machine that only needs to pull images (a deployment, a mirror).</p>
          </EmptyState>
        }
        row={(identity) => (
          <tr key={identity.uid}>
            <td>{identity.name}</td>
            <td className="mono">{identity.uid}</td>
            <td>
              <TimeText
                value={
                  identity.relationship.case === "staticKeys"
                    ? identity.relationship.value.expirationTime
                    : undefined
                }
              />
            </td>
            <td className="actions">
              <ConfirmDelete
                label="Revoke"
                what={`pull token ${identity.name}`}
                onConfirm={() => revokePullToken(client, identity.uid)}
                onDeleted={tokens.reload}
              />
            </td>
          </tr>
        )}
      />
      <CreatePullTokenForm
        group={group}
        onCreated={(token) => {
          setCreated(token);
          tokens.reload();
        }}
      />
    </section>
  );
}

function CreatePullTokenForm({
  group,
  onCreated,
}: {
  group: string;
  onCreated: (token: CreatedPullToken) => void;
}) {
  const client = useClient();
  const [name, setName] = useState("");
  const [ttlSeconds, setTtlSeconds] = useState(PULL_TOKEN_LIFETIMES[2]!.seconds);
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    const token = await createPullToken(client, { parent: group, ttlSeconds, name });
    setName("");
    onCreated(token);
  });
  return (
    <section className="card form-card" aria-labelledby="create-pull-token-heading">
      <h3 id="create-pull-token-heading">Create a pull token</h3>
      <form onSubmit={onSubmit}>
        <TextField
          label="Token name (optional)"
          field="name"
          error={submit.error}
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="Default: pull-token- and random letters."
        />
        <SelectField
          label="Valid for"
          field="static_keys.expiration_time"
          error={submit.error}
          value={String(ttlSeconds)}
          onChange={(e) => setTtlSeconds(Number(e.target.value))}
        >
          {PULL_TOKEN_LIFETIMES.map((l) => (
            <option key={l.seconds} value={l.seconds}>
              {l.label}
            </option>
          ))}
        </SelectField>
        <ApiError error={submit.error} shownFields={["name", "static_keys.expiration_time"]} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Creating…" : "Create pull token"}
        </button>
      </form>
    </section>
  );
}
