import { useState } from "react";

/**
 * A button copying `text` to the clipboard, then saying so (to screen readers too). `label` is
 * its accessible name; `caption` its visible text (default "Copy").
 */
export function CopyButton({
  text,
  label,
  caption = "Copy",
}: {
  text: string;
  label: string;
  caption?: string;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 2000);
  };
  return (
    <button type="button" className="secondary small" onClick={copy} aria-label={label} title={text}>
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : caption}
      <span className="visually-hidden" aria-live="polite">
        {state === "copied" ? "Copied to the clipboard" : ""}
      </span>
    </button>
  );
}
