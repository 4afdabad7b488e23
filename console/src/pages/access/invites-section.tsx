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
import { useBindableRoles } from "./bindable-roles";
import { INVITE_LIFETIMES } from "./lifetimes";
import { RoleOptions } from "./role-options";

const MAX_INVITES = 500;

/** The group's invites: codes that bind whoever redeems them to a role; the code is shown once. */
export default function InvitesSection({ group }: { group: string }) {
  const client = useClient();
  const invites = useQuery(
    () =>
      firstItems(
        listAll(client.iam.groupInvites.listGroupInvites, { uidp: { childrenOf: group } }),
        MAX_INVITES,
      ),
    [client, group],
  );
  const [code, setCode] = useState<string>();
  return (
    <section aria-labelledby="invites-heading">
      <h2 id="invites-heading">Invites</h2>
      {code && (
        <SecretOnce title="Invite created" label="Invite code" value={code} onDone={() => setCode(undefined)}>
          <p className="muted">
            Hand it to the invitee: signed in, they redeem it with <code>POST /auth/v1/register</code> and
            hold the role.
          </p>
        </SecretOnce>
      )}
      <ResourceList
        query={invites}
        what="invites"
        columns={["Key", "Role", "For", "Expires", "Actions"]}
        empty={
          <EmptyState title="No open invites">
            <p>
              Create an invite below to let someone join this group with a role, without knowing their
              identity first.
            </p>
          </EmptyState>
        }
        row={(invite) => (
          <tr key={invite.uid}>
            <td className="mono">{invite.keyId}</td>
            <td>{invite.role?.name ?? <span className="badge danger">role deleted</span>}</td>
            <td>
              {invite.email || "anyone with the code"}
              {invite.singleUse && <span className="badge">single use</span>}
            </td>
            <td>
              <TimeText value={invite.expirationTime} />
            </td>
            <td className="actions">
              <ConfirmDelete
                what={`invite ${invite.keyId}`}
                onConfirm={() => client.iam.groupInvites.deleteGroupInvite({ uid: invite.uid })}
                onDeleted={invites.reload}
              />
            </td>
          </tr>
        )}
      />
      <CreateInviteForm
        group={group}
        onCreated={(created) => {
          setCode(created);
          invites.reload();
        }}
      />
    </section>
  );
}

function CreateInviteForm({ group, onCreated }: { group: string; onCreated: (code: string) => void }) {
  const client = useClient();
  const roles = useBindableRoles(group);
  const [roleUid, setRoleUid] = useState("");
  const [email, setEmail] = useState("");
  const [ttlSeconds, setTtlSeconds] = useState(INVITE_LIFETIMES[2]!.seconds);
  const [singleUse, setSingleUse] = useState(true);
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    const invite = await client.iam.groupInvites.createGroupInvite({
      parent: group,
      invite: { roleUid, email: email.trim(), singleUse, ttl: { seconds: BigInt(ttlSeconds) } },
    });
    setEmail("");
    onCreated(invite.code);
  });
  return (
    <section className="card form-card" aria-labelledby="create-invite-heading">
      <h3 id="create-invite-heading">Create an invite</h3>
      <ApiError error={roles.error} />
      <form onSubmit={onSubmit}>
        <SelectField
          label="Role on redemption"
          field="role_uid"
          error={submit.error}
          value={roleUid}
          onChange={(e) => setRoleUid(e.target.value)}
          required
        >
          <RoleOptions roles={roles.data} />
        </SelectField>
        <TextField
          label="Only for this email (optional)"
          field="email"
          type="email"
          error={submit.error}
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <SelectField
          label="Valid for"
          field="ttl"
          error={submit.error}
          value={String(ttlSeconds)}
          onChange={(e) => setTtlSeconds(Number(e.target.value))}
        >
          {INVITE_LIFETIMES.map((l) => (
            <option key={l.seconds} value={l.seconds}>
              {l.label}
            </option>
          ))}
        </SelectField>
        <div className="field choices">
          <label>
            <input type="checkbox" checked={singleUse} onChange={(e) => setSingleUse(e.target.checked)} />
            Single use (deleted after the first redemption)
          </label>
        </div>
        <ApiError error={submit.error} shownFields={["role_uid", "email", "ttl"]} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Creating…" : "Create invite"}
        </button>
      </form>
    </section>
  );
}
