import { type FormEvent, useState } from "react";
import { ApiError, TextField } from "./api-error";

/**
 * A one-field "create" form: the server's violations of `field` show beside the input, any other
 * failure below it. The input clears once `onCreate` resolves.
 */
export function CreateForm({
  label,
  field,
  submitLabel,
  hint,
  onCreate,
}: {
  label: string;
  /** The request field the value goes to (for its violations), e.g. `group.name`. */
  field: string;
  submitLabel: string;
  hint?: string;
  onCreate: (value: string) => Promise<void>;
}) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onCreate(value.trim());
      setValue("");
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="create-form" onSubmit={submit}>
      <div className="inline-form">
        <TextField
          label={label}
          field={field}
          error={error}
          hint={hint}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          spellCheck={false}
          autoCapitalize="off"
        />
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
      <ApiError error={error} shownFields={[field]} />
    </form>
  );
}
