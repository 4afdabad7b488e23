import type { Scope } from "./scopes";
import { SelectField } from "./select-field";

/** A `<select>` of an organization's scopes (organization, folders, repos) for a request's `parent`. */
export function ScopeSelect({
  label,
  scopes,
  value,
  onChange,
  error,
  disabled,
  allLabel,
}: {
  label: string;
  scopes: readonly Scope[];
  value: string;
  onChange: (uid: string) => void;
  error?: unknown;
  disabled?: boolean;
  /** When given, a first choice with value "" (e.g. "Everything in the organization"). */
  allLabel?: string;
}) {
  return (
    <SelectField
      label={label}
      field="parent"
      error={error}
      value={value}
      disabled={disabled}
      onChange={(e) => onChange(e.target.value)}
    >
      {allLabel !== undefined && <option value="">{allLabel}</option>}
      {scopes.map((s) => (
        <option key={s.uid} value={s.uid}>
          {s.path} ({s.kind})
        </option>
      ))}
    </SelectField>
  );
}
