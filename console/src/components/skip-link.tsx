/**
 * Focuses the page's `<main id="main">` (made focusable by script, not by Tab), so that after the
 * skip link the next Tab starts inside the page and a screen reader reads from there.
 */
function focusMain(): void {
  const main = document.getElementById("main");
  if (!main) return;
  main.setAttribute("tabindex", "-1");
  main.focus();
}

/** "Skip to content": the first stop of Tab, shown when focused; moves the focus to the page's main. */
export function SkipLink() {
  return (
    // biome-ignore lint/a11y/useValidAnchor: a real in-page link (it works without script); the click also moves the focus.
    <a className="skip-link" href="#main" onClick={focusMain}>
      Skip to content
    </a>
  );
}
