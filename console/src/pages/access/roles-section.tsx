import { useState } from "react";
import type { iam } from "wharf/sdk";
import { ApiError, TextField, violationsOf } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { Loading } from "../../components/loading";
import { useSubmit } from "../../components/use-submit";
import { useClient } from "../../lib/wharf-context";
import { useBindableRoles } from "./bindable-roles";
import { CAPABILITY_GROUPS, groupCapabilities } from "./capabilities";

/** The built-in roles and the group's custom roles with their capabilities; custom roles can be made and deleted. */
export default function RolesSection({ group }: { group: string }) {
  const client = useClient();
  const roles = useBindableRoles(group);
  return (
    <section aria-labelledby="roles-heading">
      <h2 id="roles-heading">Roles</h2>
      {roles.loading && !roles.data && <Loading what="Loading roles" />}
      <ApiError error={roles.error} />
      <h3>Custom roles of this group</h3>
      {roles.data && roles.data.custom.length === 0 && (
        <EmptyState title="No custom roles">
          <p>
            The built-in roles below cover most needs; create a custom role when you need a different set of
            capabilities.
          </p>
        </EmptyState>
      )}
      {roles.data && roles.data.custom.length > 0 && (
        <RoleTable
          caption="Custom roles"
          roles={roles.data.custom}
          action={(role) => (
            <ConfirmDelete
              what={`role ${role.name}`}
              onConfirm={() => client.iam.roles.deleteRole({ uid: role.uid })}
              onDeleted={roles.reload}
            />
          )}
        />
      )}
      <CreateRoleForm group={group} onCreated={roles.reload} />
      <h3>Built-in roles</h3>
      {roles.data && <RoleTable caption="Built-in roles" roles={roles.data.builtIn} />}
    </section>
  );
}

function RoleTable({
  caption,
  roles,
  action,
}: {
  caption: string;
  roles: iam.Role[];
  action?: (role: iam.Role) => React.ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Role</th>
            <th scope="col">Capabilities</th>
            {action && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {roles.map((role) => (
            <tr key={role.uid}>
              <td>
                <strong>{role.name}</strong>
                {role.description && <div className="caps">{role.description}</div>}
              </td>
              <td>
                <details>
                  <summary>
                    {role.capabilities.length} capabilit{role.capabilities.length === 1 ? "y" : "ies"}
                  </summary>
                  <ul className="caps">
                    {groupCapabilities(role.capabilities).map((g) => (
                      <li key={g.resource}>
                        {g.label}: {g.capabilities.map((c) => c.verb).join(", ")}
                      </li>
                    ))}
                  </ul>
                </details>
              </td>
              {action && <td className="actions">{action(role)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CreateRoleForm({ group, onCreated }: { group: string; onCreated: () => void }) {
  const client = useClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [picked, setPicked] = useState<ReadonlySet<iam.Capability>>(new Set());
  const submit = useSubmit();
  const toggle = (capability: iam.Capability) =>
    setPicked((old) => {
      const next = new Set(old);
      if (next.has(capability)) next.delete(capability);
      else next.add(capability);
      return next;
    });
  const onSubmit = submit.handler(async () => {
    await client.iam.roles.createRole({
      parent: group,
      role: {
        name: name.trim(),
        description: description.trim(),
        capabilities: [...picked].sort((a, b) => a - b),
      },
    });
    setName("");
    setDescription("");
    setPicked(new Set());
    onCreated();
  });
  const capabilityProblems = violationsOf(submit.error, "capabilities");
  return (
    <section className="card form-card" aria-labelledby="create-role-heading">
      <h3 id="create-role-heading">Create a custom role</h3>
      <form onSubmit={onSubmit}>
        <TextField
          label="Role name"
          field="name"
          error={submit.error}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <TextField
          label="Role description"
          field="description"
          error={submit.error}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
        <fieldset aria-describedby={capabilityProblems.length > 0 ? "capabilities-error" : undefined}>
          <legend>Capabilities ({picked.size} chosen)</legend>
          <div className="capability-picker">
            {CAPABILITY_GROUPS.map((g) => (
              <fieldset key={g.resource}>
                <legend>{g.label}</legend>
                <div className="choices">
                  {g.capabilities.map((c) => (
                    <label key={c.capability} title={c.shortName}>
                      <input
                        type="checkbox"
                        aria-label={c.shortName}
                        checked={picked.has(c.capability)}
                        onChange={() => toggle(c.capability)}
                      />
                      {c.verb}
                    </label>
                  ))}
                </div>
              </fieldset>
            ))}
          </div>
          {capabilityProblems.length > 0 && (
            <small id="capabilities-error" className="field-error">
              {capabilityProblems.join("; ")}
            </small>
          )}
        </fieldset>
        <ApiError error={submit.error} shownFields={["name", "description", "capabilities"]} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Creating…" : "Create role"}
        </button>
      </form>
    </section>
  );
}
