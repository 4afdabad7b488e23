import { SelectField } from "../../components/select-field";
import type { Scope } from "./scopes";

/** A select of where to attach a new key or policy: the organization, a folder or a repository. */
export function ScopeSelect({
  label,
  scopes,
  value,
  error,
  onChange,
}: {
  label: string;
  scopes: readonly Scope[];
  value: string;
  error: unknown;
  onChange: (uid: string) => void;
}) {
  return (
    <SelectField
      label={label}
      field="parent"
      error={error}
      value={value}
      onChange={(e) => onChange(e.target.value)}
    >
      {scopes.map((s) => (
        <option key={s.uid} value={s.uid}>
          {s.label} ({s.kind})
        </option>
      ))}
    </SelectField>
  );
}
