import type { InputHTMLAttributes } from "react";
import { TextField } from "../../components/api-error";
import { violationsUnder } from "./field-violations";

/**
 * A labelled text input for a request field that holds a list (`tag_patterns`): shows every
 * violation at or below `prefix`, each naming its element (`tag_patterns[1]: …`).
 */
export function PrefixedTextField({
  prefix,
  error,
  ...field
}: {
  label: string;
  prefix: string;
  error: unknown;
  hint?: string;
} & InputHTMLAttributes<HTMLInputElement>) {
  const problems = violationsUnder(error, prefix).map((p) =>
    p.field === prefix ? p.description : `${p.field}: ${p.description}`,
  );
  return <TextField field={prefix} error={error} problems={problems} {...field} />;
}
