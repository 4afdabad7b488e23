import { useState } from "react";
import { type iam, listAll } from "wharf/sdk";
import { ApiError, TextField, violationsOf } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import { TimeText } from "../../components/time-text";
import { useSubmit } from "../../components/use-submit";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import {
  emptyIdentityDraft,
  type IdentityDraft,
  type IdentityKind,
  identityRequest,
} from "./identity-request";

const MAX_IDENTITIES = 500;

/** The identities of a group: CI systems and other issuers' tokens that may act in it. */
export default function IdentitiesSection({ group }: { group: string }) {
  const client = useClient();
  const list = useQuery(
    () =>
      firstItems(
        listAll(client.iam.identities.listIdentities, { uidp: { childrenOf: group } }),
        MAX_IDENTITIES,
      ),
    [client, group],
  );
  return (
    <section aria-labelledby="identities-heading">
      <h2 id="identities-heading">Identities</h2>
      <p className="muted">
        An identity lets tokens of another issuer (a CI system, a partner) act in this group, with the roles
        bound to it.
      </p>
      <ResourceList
        query={list}
        what="identities"
        columns={["Name", "Trusts", "Issuer", "Subject", "Created", "Actions"]}
        empty={
          <EmptyState title="No identities in this group">
            <p>
              Create one below for each system that pushes or pulls, then give it a role under{" "}
              <em>Role bindings</em>.
            </p>
          </EmptyState>
        }
        row={(identity) => <IdentityRow key={identity.uid} identity={identity} onDeleted={list.reload} />}
      />
      <CreateIdentityForm group={group} onCreated={list.reload} />
    </section>
  );
}

function IdentityRow({ identity, onDeleted }: { identity: iam.Identity; onDeleted: () => void }) {
  const client = useClient();
  const r = identity.relationship;
  const issuer =
    r.case === "claimMatch" ? r.value.issuer || r.value.issuerPattern : r.case ? r.value.issuer : "";
  const subject =
    r.case === "claimMatch" ? r.value.subject || r.value.subjectPattern : r.case ? r.value.subject : "";
  return (
    <tr>
      <td>
        {identity.name} <code className="caps">{identity.uid}</code>
      </td>
      <td>{r.case === "claimMatch" ? "Claim match" : r.case === "staticKeys" ? "Static keys" : "None"}</td>
      <td className="mono">{issuer}</td>
      <td className="mono">{subject}</td>
      <td>
        <TimeText value={identity.createTime} />
      </td>
      <td className="actions">
        <ConfirmDelete
          what={`identity ${identity.name}`}
          onConfirm={() => client.iam.identities.deleteIdentity({ uid: identity.uid })}
          onDeleted={onDeleted}
        />
      </td>
    </tr>
  );
}

function CreateIdentityForm({ group, onCreated }: { group: string; onCreated: () => void }) {
  const client = useClient();
  const [draft, setDraft] = useState<IdentityDraft>(() => emptyIdentityDraft());
  const submit = useSubmit();
  const set = (key: keyof IdentityDraft) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [key]: e.target.value }));
  const field = (key: keyof IdentityDraft, label: string, requestField: string, hint?: string) => (
    <TextField
      label={label}
      field={requestField}
      error={submit.error}
      value={draft[key] as string}
      onChange={set(key)}
      {...(hint ? { hint } : {})}
    />
  );
  const onSubmit = submit.handler(async () => {
    await client.iam.identities.createIdentity(identityRequest(group, draft));
    setDraft(emptyIdentityDraft(draft.kind));
    onCreated();
  });
  const kinds: [IdentityKind, string][] = [
    ["claimMatch", "Claim match (OIDC tokens, e.g. CI)"],
    ["staticKeys", "Static keys (a registered JWKS)"],
  ];
  return (
    <section className="card form-card" aria-labelledby="create-identity-heading">
      <h3 id="create-identity-heading">Create an identity</h3>
      <form onSubmit={onSubmit}>
        {field("name", "Name", "name", "Lowercase letters, digits, space, dot, dash or underscore.")}
        {field("description", "Description", "description")}
        <fieldset>
          <legend>Trust tokens by</legend>
          <div className="choices">
            {kinds.map(([kind, label]) => (
              <label key={kind}>
                <input
                  type="radio"
                  name="identity-kind"
                  value={kind}
                  checked={draft.kind === kind}
                  onChange={() => setDraft((d) => ({ ...d, kind }))}
                />
                {label}
              </label>
            ))}
          </div>
        </fieldset>
        {draft.kind === "claimMatch" ? (
          <fieldset>
            <legend>Claims to match (for each, an exact value or an anchored regular expression)</legend>
            {field("issuer", "Issuer", "claim_match.issuer", "The issuer's https URL.")}
            {field("issuerPattern", "Issuer pattern", "claim_match.issuer_pattern")}
            {field("subject", "Subject", "claim_match.subject")}
            {field("subjectPattern", "Subject pattern", "claim_match.subject_pattern", "e.g. repo:acme/.*")}
            {field("audience", "Audience", "claim_match.audience")}
            {field("audiencePattern", "Audience pattern", "claim_match.audience_pattern")}
          </fieldset>
        ) : (
          <fieldset>
            <legend>Static keys</legend>
            {field("keysIssuer", "Issuer", "static_keys.issuer")}
            {field("keysSubject", "Subject", "static_keys.subject")}
            <JwksField value={draft.issuerKeys} onChange={set("issuerKeys")} error={submit.error} />
            <TextField
              label="Expires"
              field="static_keys.expiration_time"
              error={submit.error}
              type="datetime-local"
              value={draft.expiration}
              onChange={set("expiration")}
            />
            {field("keysAudience", "Audience", "static_keys.audiences")}
          </fieldset>
        )}
        <ApiError
          error={submit.error}
          shownFields={[
            "name",
            "description",
            "claim_match.issuer",
            "claim_match.issuer_pattern",
            "claim_match.subject",
            "claim_match.subject_pattern",
            "claim_match.audience",
            "claim_match.audience_pattern",
            "static_keys.issuer",
            "static_keys.subject",
            "static_keys.issuer_keys",
            "static_keys.expiration_time",
            "static_keys.audiences",
          ]}
        />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Creating…" : "Create identity"}
        </button>
      </form>
    </section>
  );
}

function JwksField({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (e: { target: { value: string } }) => void;
  error: unknown;
}) {
  const problems = violationsOf(error, "static_keys.issuer_keys");
  return (
    <div className="field">
      <label htmlFor="identity-jwks">Public keys (JWKS JSON)</label>
      <textarea
        id="identity-jwks"
        className="mono"
        rows={4}
        value={value}
        onChange={onChange}
        aria-invalid={problems.length > 0 || undefined}
        aria-describedby={problems.length > 0 ? "identity-jwks-error" : undefined}
        placeholder='{"keys":[…]}'
      />
      {problems.length > 0 && (
        <small id="identity-jwks-error" className="field-error">
          {problems.join("; ")}
        </small>
      )}
    </div>
  );
}
