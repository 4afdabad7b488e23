import { type InputHTMLAttributes, useId } from "react";
import { isWharfApiError } from "wharf/sdk";

/**
 * The descriptions of the server's field violations of `error` for `field` (`repo.name` also
 * takes violations of `name`, since requests nest the resource), or [] when there are none.
 */
export function violationsOf(error: unknown, field: string): string[] {
  if (!isWharfApiError(error)) return [];
  return error.fieldViolations.filter((v) => matches(v.field, field)).map((v) => v.description);
}

/**
 * The one way the console shows a failure: the server's code and message, then the field
 * violations not already shown next to their field (`shownFields`), precondition violations and
 * the resource concerned. Any other error shows its message.
 */
export function ApiError({ error, shownFields = [] }: { error: unknown; shownFields?: readonly string[] }) {
  if (error === undefined || error === null) return null;
  if (!isWharfApiError(error)) {
    return (
      <div className="error" role="alert">
        <strong>Something went wrong:</strong> {error instanceof Error ? error.message : String(error)}
      </div>
    );
  }
  const others = error.fieldViolations.filter((v) => !shownFields.some((f) => matches(v.field, f)));
  return (
    <div className="error" role="alert">
      <p>
        <strong>{error.codeName}</strong>: {error.message}
      </p>
      {others.length > 0 && (
        <ul>
          {others.map((v) => (
            <li key={`${v.field}:${v.description}`}>
              <code>{v.field}</code>: {v.description}
            </li>
          ))}
        </ul>
      )}
      {error.preconditionViolations.length > 0 && (
        <ul>
          {error.preconditionViolations.map((v) => (
            <li key={`${v.type}:${v.subject}`}>
              {v.type} {v.subject}: {v.description}
            </li>
          ))}
        </ul>
      )}
      {error.resourceInfo && (
        <p className="muted">
          {error.resourceInfo.resourceType} {error.resourceInfo.resourceName}
        </p>
      )}
    </div>
  );
}

/** Whether a violation of `violationField` is about the form's `field` (`repo.name` ~ `name`). */
function matches(violationField: string, field: string): boolean {
  const leaf = field.split(".").at(-1);
  return violationField === field || violationField === leaf || violationField.endsWith(`.${field}`);
}

/** A labelled text input that shows the server's violations of `field` (from `error`) under it. */
export function TextField({
  label,
  field,
  error,
  hint,
  problems: shown,
  ...input
}: {
  label: string;
  /** The request field this input fills, e.g. `repo.name`. */
  field: string;
  error: unknown;
  hint?: string;
  /** What to show as the field's problems instead of `error`'s violations of `field` (a list field's elements). */
  problems?: readonly string[];
} & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const problems = shown ?? violationsOf(error, field);
  const describedBy = [hint ? `${id}-hint` : "", problems.length > 0 ? `${id}-error` : ""].filter(Boolean);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={field}
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
          {problems.join("; ")}
        </small>
      )}
    </div>
  );
}
