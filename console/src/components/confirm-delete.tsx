import { useEffect, useRef, useState } from "react";
import { ApiError } from "./api-error";

/**
 * A "Delete" button that asks first: a click shows "Delete <what>?" with Cancel (focused) and a
 * confirming Delete. The confirmed `onConfirm` runs once; its failure is shown in place (the
 * server's message), its success calls `onDeleted`. Escape cancels.
 */
export function ConfirmDelete({
  what,
  onConfirm,
  onDeleted,
  label = "Delete",
}: {
  /** What is deleted, as the question names it: `role binding of ci to registry.pull`. */
  what: string;
  onConfirm: () => Promise<unknown>;
  onDeleted: () => void;
  label?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const cancelButton = useRef<HTMLButtonElement>(null);
  // The user asked to delete: take focus to the question, on the harmless answer (again after a
  // refusal, since the disabled buttons lost it meanwhile).
  // biome-ignore lint/correctness/useExhaustiveDependencies: `error` marks a refusal to refocus after.
  useEffect(() => {
    if (asking) cancelButton.current?.focus();
  }, [asking, error]);

  if (!asking) {
    return (
      <button
        type="button"
        className="danger"
        aria-label={`${label} ${what}`}
        onClick={() => setAsking(true)}
      >
        {label}
      </button>
    );
  }
  const cancel = () => {
    setAsking(false);
    setError(undefined);
  };
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
      setAsking(false);
      onDeleted();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div
      className="confirm"
      role="alertdialog"
      aria-label={`Confirm: ${label.toLowerCase()} ${what}`}
      onKeyDown={(e) => e.key === "Escape" && cancel()}
    >
      <p>
        {label} {what}?
      </p>
      <button type="button" className="secondary" onClick={cancel} disabled={busy} ref={cancelButton}>
        Cancel
      </button>{" "}
      <button type="button" className="danger" onClick={confirm} disabled={busy}>
        {busy ? "Deleting…" : `Yes, ${label.toLowerCase()}`}
      </button>
      <ApiError error={error} />
    </div>
  );
}
