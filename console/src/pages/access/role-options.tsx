import type { BindableRoles } from "./bindable-roles";

/** The `<option>`s of a role picker: a blank prompt, then built-in and custom roles in groups. */
export function RoleOptions({ roles }: { roles: BindableRoles | undefined }) {
  return (
    <>
      <option value="">Choose a role…</option>
      <optgroup label="Built-in roles">
        {roles?.builtIn.map((r) => (
          <option key={r.uid} value={r.uid}>
            {r.name}
          </option>
        ))}
      </optgroup>
      {roles && roles.custom.length > 0 && (
        <optgroup label="Custom roles of this group">
          {roles.custom.map((r) => (
            <option key={r.uid} value={r.uid}>
              {r.name}
            </option>
          ))}
        </optgroup>
      )}
    </>
  );
}
