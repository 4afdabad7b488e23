import { useId } from "react";
import { violationsOf } from "../../components/api-error";

/** A labelled PEM textarea that shows the server's violations of `field` under it (like TextField). */
export function PemField({
  label,
  field,
  error,
  value,
  hint,
  onChange,
}: {
  label: string;
  field: string;
  error: unknown;
  value: string;
  hint?: string;
  onChange: (value: string) => void;
}) {
  const id = useId();
  const problems = violationsOf(error, field);
  const describedBy = [hint ? `${id}-hint` : "", problems.length > 0 ? `${id}-error` : ""].filter(Boolean);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        name={field}
        className="mono pem-input"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        spellCheck={false}
        aria-invalid={problems.length > 0 || undefined}
        aria-describedby={describedBy.length > 0 ? describedBy.join(" ") : undefined}
        placeholder="-----BEGIN PUBLIC KEY-----"
        required
      />
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
      {problems.length > 0 && (
        <small id={`${id}-error`} className="field-error">
          {problems.join("; ")}
        </small>
      )}
    </div>
  );
}
