import { type InputHTMLAttributes, useId } from "react";
import { violationsUnder } from "./field-violations";

/**
 * A labelled text input for a request field that holds a list (`tag_patterns`): shows every
 * violation at or below `prefix`, each naming its element (`tag_patterns[1]: …`).
 */
export function PrefixedTextField({
  label,
  prefix,
  error,
  hint,
  ...input
}: {
  label: string;
  prefix: string;
  error: unknown;
  hint?: string;
} & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const problems = violationsUnder(error, prefix);
  const describedBy = [hint ? `${id}-hint` : "", problems.length > 0 ? `${id}-error` : ""].filter(Boolean);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={prefix}
        aria-invalid={problems.length > 0 || undefined}
        aria-describedby={describedBy.length > 0 ? describedBy.join(" ") : undefined}
        {...input}
      />
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
      {problems.length > 0 && (
        <small id={`${id}-error`} className="field-error">
          {problems
            .map((p) => (p.field === prefix ? p.description : `${p.field}: ${p.description}`))
            .join("; ")}
        </small>
      )}
    </div>
  );
}
