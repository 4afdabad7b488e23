import { useId, useState } from "react";

/**
 * A secret the server (or the browser) made and will never show again (an invite code, a pull
 * token's password): a read-only field with a Copy button, a warning that it is shown once, and a
 * Done button that forgets it (`onDone`).
 */
export function SecretOnce({
  title,
  label,
  value,
  children,
  onDone,
}: {
  title: string;
  /** The field's label, e.g. "Invite code". */
  label: string;
  value: string;
  /** How to use the secret. */
  children?: React.ReactNode;
  onDone: () => void;
}) {
  const id = useId();
  const [copied, setCopied] = useState<"yes" | "failed">();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  };
  return (
    <section className="card secret-once" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{title}</h3>
      <p>
        <strong>Copy it now: it is shown only this once.</strong>
      </p>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} readOnly value={value} className="mono" onFocus={(e) => e.currentTarget.select()} />
      </div>
      <button type="button" onClick={copy}>
        Copy {label.toLowerCase()}
      </button>{" "}
      <span role="status" aria-live="polite">
        {copied === "yes"
          ? "Copied."
          : copied === "failed"
            ? "Copying failed: select the text and copy it."
            : ""}
      </span>
      {children}
      <p>
        <button type="button" className="secondary" onClick={onDone}>
          Done
        </button>
      </p>
    </section>
  );
}
