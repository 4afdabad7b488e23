import { type ReactNode, type SelectHTMLAttributes, useId } from "react";
import { violationsOf } from "./api-error";

/** A labelled `<select>` that shows the server's violations of `field` (from `error`) under it, like TextField. */
export function SelectField({
  label,
  field,
  error,
  children,
  ...select
}: {
  label: string;
  /** The request field this select fills, e.g. `role_uid`. */
  field: string;
  error: unknown;
  children: ReactNode;
} & SelectHTMLAttributes<HTMLSelectElement>) {
  const id = useId();
  const problems = violationsOf(error, field);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        name={field}
        aria-invalid={problems.length > 0 || undefined}
        aria-describedby={problems.length > 0 ? `${id}-error` : undefined}
        {...select}
      >
        {children}
      </select>
      {problems.length > 0 && (
        <small id={`${id}-error`} className="field-error">
          {problems.join("; ")}
        </small>
      )}
    </div>
  );
}

/** One choice of a {@link ChoiceField}. */
export interface Choice {
  value: string;
  label: string;
}

/** A labelled `<select>` of `choices` for filters and sorting (no request field); `onChange` gets the chosen value. */
export function ChoiceField({
  label,
  value,
  choices,
  onChange,
}: {
  label: string;
  value: string;
  choices: readonly Choice[];
  onChange: (value: string) => void;
}) {
  return (
    <SelectField
      label={label}
      field=""
      error={undefined}
      value={value}
      onChange={(e) => onChange(e.target.value)}
    >
      {choices.map((c) => (
        <option key={c.value} value={c.value}>
          {c.label}
        </option>
      ))}
    </SelectField>
  );
}
