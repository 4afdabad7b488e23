import { type KeyboardEvent, useEffect, useRef, useState } from "react";
import { ApiError } from "./api-error";

/**
 * Keeps Tab and Shift+Tab among the enabled buttons of `container` (the question is answered or
 * cancelled before focus leaves it).
 */
function trapTab(event: KeyboardEvent<HTMLElement>): void {
  if (event.key !== "Tab") return;
  const buttons = [...event.currentTarget.querySelectorAll<HTMLButtonElement>("button:not(:disabled)")];
  const first = buttons[0];
  const last = buttons.at(-1);
  if (!first || !last) return;
  const active = document.activeElement;
  if (event.shiftKey && active === first) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && active === last) {
    event.preventDefault();
    first.focus();
  }
}

/**
 * A "Delete" button that asks first: a click shows "Delete <what>?" with Cancel (focused) and a
 * confirming Delete; Tab stays within the question while it is open. The confirmed `onConfirm`
 * runs once; its failure is shown in place (the server's message), its success calls `onDeleted`.
 * Escape or Cancel closes the question and gives the focus back to the Delete button.
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
  const deleteButton = useRef<HTMLButtonElement>(null);
  /** Set when the question was cancelled: the Delete button, shown again, takes the focus back. */
  const [returnFocus, setReturnFocus] = useState(false);
  // The user asked to delete: take focus to the question, on the harmless answer (again after a
  // refusal, since the disabled buttons lost it meanwhile).
  // biome-ignore lint/correctness/useExhaustiveDependencies: `error` marks a refusal to refocus after.
  useEffect(() => {
    if (asking) cancelButton.current?.focus();
  }, [asking, error]);
  useEffect(() => {
    if (asking || !returnFocus) return;
    deleteButton.current?.focus();
    setReturnFocus(false);
  }, [asking, returnFocus]);

  if (!asking) {
    return (
      <button
        type="button"
        className="danger"
        aria-label={`${label} ${what}`}
        ref={deleteButton}
        onClick={() => setAsking(true)}
      >
        {label}
      </button>
    );
  }
  const cancel = () => {
    setAsking(false);
    setError(undefined);
    setReturnFocus(true);
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
      onKeyDown={(e) => {
        if (e.key === "Escape" && !busy) cancel();
        else trapTab(e);
      }}
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
