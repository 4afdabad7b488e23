import { useState } from "react";
import { type iam, listAll } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import { SelectField } from "../../components/select-field";
import { TimeText } from "../../components/time-text";
import { useSubmit } from "../../components/use-submit";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { useBindableRoles } from "./bindable-roles";
import { RoleOptions } from "./role-options";

const MAX_ROWS = 500;

/** The role bindings at a group (who holds which role there), with create and delete. */
export default function RoleBindingsSection({ group }: { group: string }) {
  const client = useClient();
  const bindings = useQuery(
    () => firstItems(listAll(client.iam.roleBindings.listRoleBindings, { group }), MAX_ROWS),
    [client, group],
  );
  return (
    <section aria-labelledby="bindings-heading">
      <h2 id="bindings-heading">Role bindings</h2>
      <p className="muted">A binding grants a role's capabilities on this group and everything under it.</p>
      <ResourceList
        query={bindings}
        what="role bindings"
        columns={["Identity", "Role", "Created", "Actions"]}
        empty={
          <EmptyState title="No role bindings at this group">
            <p>
              Bind an identity to a role below, or send an invite so a person binds themselves on sign-up.
            </p>
          </EmptyState>
        }
        row={(b) => {
          const who = b.identity?.name || b.identity?.email || b.identityUid;
          const role = b.role?.name || b.roleUid;
          return (
            <tr key={b.uid}>
              <td>
                {who} <code className="caps">{b.identityUid}</code>
              </td>
              <td>{role}</td>
              <td>
                <TimeText value={b.createTime} />
              </td>
              <td className="actions">
                <ConfirmDelete
                  what={`role binding of ${who} to ${role}`}
                  onConfirm={() => client.iam.roleBindings.deleteRoleBinding({ uid: b.uid })}
                  onDeleted={bindings.reload}
                />
              </td>
            </tr>
          );
        }}
      />
      <CreateBindingForm group={group} onCreated={bindings.reload} />
    </section>
  );
}

/** The identities a binding at `group` may name: the group's own, and registered people when visible. */
function useBindableIdentities(group: string) {
  const client = useClient();
  return useQuery(async () => {
    const own = await firstItems(
      listAll(client.iam.identities.listIdentities, { uidp: { descendantsOf: group } }),
      MAX_ROWS,
    );
    // Registered people live at the root; callers without identity.list there see none.
    const people = await firstItems(
      listAll(client.iam.identities.listIdentities, { uidp: { inRoot: true } }),
      MAX_ROWS,
    ).catch(() => ({ items: [] as iam.Identity[], more: false }));
    return { own: own.items, people: people.items };
  }, [client, group]);
}

function CreateBindingForm({ group, onCreated }: { group: string; onCreated: () => void }) {
  const client = useClient();
  const identities = useBindableIdentities(group);
  const roles = useBindableRoles(group);
  const [identityUid, setIdentityUid] = useState("");
  const [roleUid, setRoleUid] = useState("");
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    await client.iam.roleBindings.createRoleBinding({ parent: group, roleBinding: { identityUid, roleUid } });
    setIdentityUid("");
    setRoleUid("");
    onCreated();
  });
  return (
    <section className="card form-card" aria-labelledby="create-binding-heading">
      <h3 id="create-binding-heading">Bind an identity to a role</h3>
      <ApiError error={identities.error ?? roles.error} />
      <form onSubmit={onSubmit}>
        <SelectField
          label="Identity"
          field="identity_uid"
          error={submit.error}
          value={identityUid}
          onChange={(e) => setIdentityUid(e.target.value)}
          required
        >
          <option value="">Choose an identity…</option>
          <optgroup label="Identities of this group">
            {identities.data?.own.map((i) => (
              <option key={i.uid} value={i.uid}>
                {i.name}
              </option>
            ))}
          </optgroup>
          {identities.data && identities.data.people.length > 0 && (
            <optgroup label="Registered people">
              {identities.data.people.map((i) => (
                <option key={i.uid} value={i.uid}>
                  {i.email || i.name}
                </option>
              ))}
            </optgroup>
          )}
        </SelectField>
        <SelectField
          label="Role"
          field="role_uid"
          error={submit.error}
          value={roleUid}
          onChange={(e) => setRoleUid(e.target.value)}
          required
        >
          <RoleOptions roles={roles.data} />
        </SelectField>
        <ApiError error={submit.error} shownFields={["identity_uid", "role_uid"]} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Binding…" : "Create role binding"}
        </button>
      </form>
    </section>
  );
}
