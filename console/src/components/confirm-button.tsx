import { type ReactNode, useRef, useState } from "react";
import { ApiError } from "./api-error";

/**
 * A button that asks before `onConfirm` runs, in a modal dialog (focus moves into it, Escape
 * cancels). A failure of `onConfirm` is shown in the dialog, which stays open.
 */
export function ConfirmButton({
  label,
  accessibleName,
  title,
  children,
  confirmLabel = "Delete",
  onConfirm,
}: {
  /** The button's text (and accessible name unless `accessibleName` is given). */
  label: string;
  /** A fuller accessible name when the text alone is ambiguous ("Restore" on every row). */
  accessibleName?: string;
  title: string;
  /** What will happen, in words. */
  children: ReactNode;
  confirmLabel?: string;
  onConfirm: () => Promise<void>;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
      dialog.current?.close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className="danger small"
        aria-label={accessibleName}
        onClick={() => dialog.current?.showModal()}
      >
        {label}
      </button>
      <dialog ref={dialog} aria-label={title} className="confirm">
        <h2>{title}</h2>
        <div>{children}</div>
        <ApiError error={error} />
        <div className="actions">
          <button type="button" className="secondary" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" className="danger" onClick={confirm} disabled={busy}>
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
