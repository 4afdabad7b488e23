import { useState } from "react";
import type { registry } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { ScopeSelect } from "../../components/scope-select";
import { parentOf, type Scope } from "../../components/scopes";
import { useSubmit } from "../../components/use-submit";
import { useClient } from "../../lib/wharf-context";
import { violationsUnder } from "./field-violations";
import { formatPatterns, parsePatterns } from "./patterns";
import { PrefixedTextField } from "./prefixed-field";

/**
 * Creates an immutability rule under a chosen scope, or (with `editing`) changes a rule's patterns
 * and description with an update mask. A refusal keeps what was typed and shows the server's
 * violations beside their fields.
 */
export function ImmutabilityForm({
  scopes,
  defaultParent,
  editing,
  onSaved,
  onCancel,
}: {
  scopes: readonly Scope[];
  defaultParent: string;
  editing: registry.ImmutabilityRule | undefined;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const client = useClient();
  const [parent, setParent] = useState(editing ? parentOf(editing.uid) : defaultParent);
  const [patterns, setPatterns] = useState(editing ? formatPatterns(editing.tagPatterns) : "");
  const [description, setDescription] = useState(editing?.description ?? "");
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    const rule = { tagPatterns: parsePatterns(patterns), description: description.trim() };
    if (editing) {
      await client.registry.immutabilityRules.updateImmutabilityRule({
        immutabilityRule: { uid: editing.uid, ...rule },
        updateMask: { paths: ["tag_patterns", "description"] },
      });
    } else {
      await client.registry.immutabilityRules.createImmutabilityRule({ parent, immutabilityRule: rule });
      setPatterns("");
      setDescription("");
    }
    onSaved();
  });
  const shown = [
    "parent",
    "description",
    ...violationsUnder(submit.error, "tag_patterns").map((v) => v.field),
  ];
  const heading = editing ? "Edit immutability rule" : "Add an immutability rule";
  return (
    <section className="card form-card" aria-labelledby="immutability-form-heading">
      <h3 id="immutability-form-heading">{heading}</h3>
      <form onSubmit={onSubmit}>
        <ScopeSelect
          label="Applies to"
          scopes={scopes}
          value={parent}
          onChange={setParent}
          error={submit.error}
          disabled={editing !== undefined}
        />
        <PrefixedTextField
          label="Tag patterns"
          prefix="tag_patterns"
          error={submit.error}
          value={patterns}
          onChange={(e) => setPatterns(e.target.value)}
          hint="Globs separated by spaces: * (no /), ?, [a-z]; !pattern excludes. E.g. v* !v*-rc*"
          spellCheck={false}
          autoCapitalize="off"
        />
        <TextField
          label="Description"
          field="description"
          error={submit.error}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
        <ApiError error={submit.error} shownFields={shown} />
        <div className="button-row">
          <button type="submit" disabled={submit.busy}>
            {submit.busy ? "Saving…" : editing ? "Save rule" : "Add rule"}
          </button>
          {editing && (
            <button type="button" className="secondary" onClick={onCancel}>
              Cancel editing
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
