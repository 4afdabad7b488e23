import { useState } from "react";
import { listAll } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import { SelectField } from "../../components/select-field";
import { useSubmit } from "../../components/use-submit";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { useBindableRoles } from "./bindable-roles";
import {
  emptyIdentityProviderDraft,
  type IdentityProviderDraft,
  identityProviderRequest,
} from "./identity-provider-request";
import { RoleOptions } from "./role-options";

const MAX_PROVIDERS = 200;

/** The group's own OpenID Connect identity providers; the client secret is write-only. */
export default function IdentityProvidersSection({ group }: { group: string }) {
  const client = useClient();
  const providers = useQuery(
    () =>
      firstItems(
        listAll(client.iam.identityProviders.listIdentityProviders, { uidp: { childrenOf: group } }),
        MAX_PROVIDERS,
      ),
    [client, group],
  );
  const roles = useBindableRoles(group);
  const roleName = (uid: string) =>
    [...(roles.data?.builtIn ?? []), ...(roles.data?.custom ?? [])].find((r) => r.uid === uid)?.name ?? uid;
  return (
    <section aria-labelledby="providers-heading">
      <h2 id="providers-heading">Identity providers</h2>
      <p className="muted">People of this organization sign in through its own OpenID Connect provider.</p>
      <ResourceList
        query={providers}
        what="identity providers"
        columns={["Name", "Issuer", "Client", "Default role", "Actions"]}
        empty={
          <EmptyState title="No identity providers">
            <p>
              Without one, people sign in through the server's default provider. Register your provider below
              with the client the provider issued for Wharf.
            </p>
          </EmptyState>
        }
        row={(p) => {
          const oidc = p.configuration.case === "oidc" ? p.configuration.value : undefined;
          return (
            <tr key={p.uid}>
              <td>{p.name}</td>
              <td className="mono">{oidc?.issuer}</td>
              <td className="mono">
                {oidc?.clientId} {oidc?.pkceEnabled && <span className="badge">PKCE</span>}
              </td>
              <td>{roleName(p.defaultRole)}</td>
              <td className="actions">
                <ConfirmDelete
                  what={`identity provider ${p.name}`}
                  onConfirm={() => client.iam.identityProviders.deleteIdentityProvider({ uid: p.uid })}
                  onDeleted={providers.reload}
                />
              </td>
            </tr>
          );
        }}
      />
      <CreateProviderForm group={group} onCreated={providers.reload} />
    </section>
  );
}

const SHOWN_FIELDS = [
  "name",
  "description",
  "default_role",
  "oidc.issuer",
  "oidc.client_id",
  "oidc.client_secret",
  "oidc.additional_scopes",
  "oidc.groups_claim",
];

function CreateProviderForm({ group, onCreated }: { group: string; onCreated: () => void }) {
  const client = useClient();
  const roles = useBindableRoles(group);
  const [draft, setDraft] = useState<IdentityProviderDraft>(emptyIdentityProviderDraft);
  const submit = useSubmit();
  const set = (key: keyof IdentityProviderDraft) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [key]: e.target.value }));
  const onSubmit = submit.handler(async () => {
    await client.iam.identityProviders.createIdentityProvider(identityProviderRequest(group, draft));
    // The secret is gone from the page once sent: the server never returns it.
    setDraft(emptyIdentityProviderDraft());
    onCreated();
  });
  return (
    <section className="card form-card" aria-labelledby="create-provider-heading">
      <h3 id="create-provider-heading">Add an identity provider</h3>
      <ApiError error={roles.error} />
      <form onSubmit={onSubmit}>
        <TextField
          label="Provider name"
          field="name"
          error={submit.error}
          value={draft.name}
          onChange={set("name")}
        />
        <TextField
          label="Provider description"
          field="description"
          error={submit.error}
          value={draft.description}
          onChange={set("description")}
        />
        <SelectField
          label="Default role of people on first sign-in"
          field="default_role"
          error={submit.error}
          value={draft.defaultRole}
          onChange={set("defaultRole")}
          required
        >
          <RoleOptions roles={roles.data} />
        </SelectField>
        <TextField
          label="Issuer URL"
          field="oidc.issuer"
          error={submit.error}
          value={draft.issuer}
          onChange={set("issuer")}
          hint="Its discovery document must be reachable from the server."
        />
        <TextField
          label="Client ID"
          field="oidc.client_id"
          error={submit.error}
          value={draft.clientId}
          onChange={set("clientId")}
        />
        <TextField
          label="Client secret"
          field="oidc.client_secret"
          error={submit.error}
          type="password"
          autoComplete="new-password"
          value={draft.clientSecret}
          onChange={set("clientSecret")}
          hint="Write-only: stored by the server and never shown again. Leave empty for a PKCE client."
        />
        <div className="field choices">
          <label>
            <input
              type="checkbox"
              checked={draft.pkceEnabled}
              onChange={(e) => setDraft((d) => ({ ...d, pkceEnabled: e.target.checked }))}
            />
            Public client (PKCE, no secret)
          </label>
        </div>
        <TextField
          label="Additional scopes"
          field="oidc.additional_scopes"
          error={submit.error}
          value={draft.additionalScopes}
          onChange={set("additionalScopes")}
          hint="Besides openid, separated by spaces."
        />
        <TextField
          label="Groups claim"
          field="oidc.groups_claim"
          error={submit.error}
          value={draft.groupsClaim}
          onChange={set("groupsClaim")}
          hint="The ID-token claim listing a person's groups; empty disables group mappings."
        />
        <SelectField
          label="Match accounts by"
          field="oidc.correlation_rule"
          error={submit.error}
          value={draft.correlation}
          onChange={(e) => setDraft((d) => ({ ...d, correlation: e.target.value === "oid" ? "oid" : "sub" }))}
        >
          <option value="sub">sub claim</option>
          <option value="oid">oid claim</option>
        </SelectField>
        <ApiError error={submit.error} shownFields={[...SHOWN_FIELDS, "oidc.correlation_rule"]} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Adding…" : "Add identity provider"}
        </button>
      </form>
    </section>
  );
}
