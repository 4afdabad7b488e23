import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { useNavigate } from "../../lib/router";
import { useClient } from "../../lib/wharf-context";
import { ApiError } from "../api-error";
import type { SearchOption } from "./search-options";
import { useSearch } from "./use-search";
import "./search.css";

/** True when a key typed into `target` is text for it, so "/" must not be taken as the shortcut. */
function isTextEntry(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** What the polite live region says about the current search. */
function announcement(state: ReturnType<typeof useSearch>, count: number): string {
  if (state.status === "loading") return "Searching…";
  if (state.status === "error") return "Search failed";
  if (state.status === "done") return count === 0 ? "No results" : `${count} result${count === 1 ? "" : "s"}`;
  return "";
}

/**
 * The header's search box: one text field that finds repositories, tags, images (by digest prefix)
 * and advisories, as a WAI-ARIA combobox with a grouped listbox. Arrow keys move the active
 * option (`aria-activedescendant`; focus stays in the field), Enter opens it, Escape closes the
 * list (a second Escape clears the text), "/" anywhere else focuses the field. The result count
 * is announced politely.
 */
export function SearchBox() {
  const client = useClient();
  const navigate = useNavigate();
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState("");
  const [open, setOpen] = useState(false);
  const state = useSearch(client, text);
  // The active option belongs to the answer it was chosen in: a new answer starts with none.
  const [activeIn, setActiveIn] = useState<{ of: typeof state; index: number }>({ of: state, index: -1 });
  const active = activeIn.of === state ? activeIn.index : -1;
  const setActive = (index: number) => setActiveIn({ of: state, index });
  // While a newer search runs, the previous results stay (no flicker on each keystroke).
  const groups = state.status === "done" || state.status === "loading" ? state.groups : [];
  const options: SearchOption[] = groups.flatMap((g) => g.options);
  const optionId = (index: number) => `${id}-option-${index}`;
  const expanded = open && options.length > 0;

  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
      if (isTextEntry(event.target)) return;
      event.preventDefault();
      input.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  const choose = (option: SearchOption) => {
    setOpen(false);
    setText("");
    navigate(option.href);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    const last = options.length - 1;
    switch (event.key) {
      case "ArrowDown":
        event.preventDefault();
        setOpen(true);
        if (options.length > 0) setActive(active < last ? active + 1 : 0);
        break;
      case "ArrowUp":
        event.preventDefault();
        setOpen(true);
        if (options.length > 0) setActive(active > 0 ? active - 1 : last);
        break;
      case "Enter": {
        const option = expanded ? options[active] : undefined;
        if (option) {
          event.preventDefault();
          choose(option);
        }
        break;
      }
      case "Escape":
        event.preventDefault();
        if (open && text !== "") setOpen(false);
        else setText("");
        setActive(-1);
        break;
    }
  };

  let index = -1;
  return (
    <search className="site-search">
      <label htmlFor={`${id}-input`} className="visually-hidden">
        Search repositories, tags, digests and advisories
      </label>
      <input
        id={`${id}-input`}
        ref={input}
        type="text"
        role="combobox"
        aria-expanded={expanded}
        aria-controls={`${id}-listbox`}
        aria-autocomplete="list"
        aria-activedescendant={expanded && active >= 0 ? optionId(active) : undefined}
        aria-keyshortcuts="/"
        aria-describedby={`${id}-hint`}
        placeholder="Search ( / )"
        autoComplete="off"
        spellCheck={false}
        value={text}
        onChange={(event) => {
          setText(event.target.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={onKeyDown}
      />
      <span id={`${id}-hint`} className="visually-hidden">
        Repositories and tags by name, images by a digest prefix of 4 or more hex digits, advisories by id or
        alias.
      </span>
      <div className="site-search-popup" hidden={!open || state.status === "idle"}>
        <div id={`${id}-listbox`} role="listbox" aria-label="Search results" hidden={!expanded}>
          {groups.map((group) => (
            // biome-ignore lint/a11y/useSemanticElements: a listbox's groups are role="group" (WAI-ARIA grouped listbox); a fieldset is for form controls.
            <div key={group.kind} role="group" aria-labelledby={`${id}-${group.kind}`}>
              <div role="presentation" id={`${id}-${group.kind}`} className="site-search-group">
                {group.title}
              </div>
              {group.options.map((option) => {
                index += 1;
                const at = index;
                return (
                  // biome-ignore lint/a11y/useFocusableInteractive: combobox options are never focused: the field keeps focus and points at them with aria-activedescendant.
                  // biome-ignore lint/a11y/useKeyWithClickEvents: the field's onKeyDown is the keyboard path (arrows and Enter).
                  <div
                    key={option.key}
                    id={optionId(at)}
                    role="option"
                    aria-selected={at === active}
                    className="site-search-option"
                    data-href={option.href}
                    // Keep focus in the field: the click chooses, the field never blurs.
                    onMouseDown={(event) => event.preventDefault()}
                    onClick={() => choose(option)}
                    onMouseMove={() => setActive(at)}
                  >
                    <span className="site-search-label">{option.label}</span>
                    {option.detail && <span className="site-search-detail">{option.detail}</span>}
                  </div>
                );
              })}
            </div>
          ))}
        </div>
        {state.status === "loading" && options.length === 0 && <p className="site-search-note">Searching…</p>}
        {state.status === "done" && options.length === 0 && <p className="site-search-note">No results</p>}
        {state.status === "error" && <ApiError error={state.error} />}
      </div>
      <div role="status" aria-live="polite" className="visually-hidden">
        {announcement(state, options.length)}
      </div>
    </search>
  );
}
