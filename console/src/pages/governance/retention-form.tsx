import { useState } from "react";
import type { registry } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { ScopeSelect } from "../../components/scope-select";
import { parentOf, type Scope } from "../../components/scopes";
import { useSubmit } from "../../components/use-submit";
import { useClient } from "../../lib/wharf-context";
import { violationsAt, violationsUnder } from "./field-violations";
import { EMPTY_RULE, type RuleDraft, ruleDraft, ruleFromDraft } from "./retention-rules";

/** Most rules a policy holds (the server's limit). */
const MAX_RULES = 20;

/**
 * Creates a retention policy under a chosen scope, or (with `editing`) replaces a policy's
 * description, rules and schedule with an update mask. A refusal keeps what was typed and shows
 * each violation beside its field (`rules[1].keepPushedWithin`).
 */
export function RetentionForm({
  scopes,
  defaultParent,
  editing,
  onSaved,
  onCancel,
}: {
  scopes: readonly Scope[];
  defaultParent: string;
  editing: registry.RetentionPolicy | undefined;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const client = useClient();
  const [parent, setParent] = useState(editing ? parentOf(editing.uid) : defaultParent);
  const [description, setDescription] = useState(editing?.description ?? "");
  const [schedule, setSchedule] = useState(editing?.schedule ?? "");
  const [rules, setRules] = useState<RuleDraft[]>(
    editing ? editing.rules.map(ruleDraft) : [{ ...EMPTY_RULE }],
  );
  const submit = useSubmit();
  const setRule = (index: number, change: Partial<RuleDraft>) =>
    setRules((old) => old.map((r, i) => (i === index ? { ...r, ...change } : r)));
  const onSubmit = submit.handler(async () => {
    const policy = {
      description: description.trim(),
      schedule: schedule.trim(),
      rules: rules.map(ruleFromDraft),
    };
    if (editing) {
      await client.registry.retentionPolicies.updateRetentionPolicy({
        retentionPolicy: { uid: editing.uid, ...policy },
        updateMask: { paths: ["description", "rules", "schedule"] },
      });
    } else {
      await client.registry.retentionPolicies.createRetentionPolicy({ parent, retentionPolicy: policy });
      setDescription("");
      setSchedule("");
      setRules([{ ...EMPTY_RULE }]);
    }
    onSaved();
  });
  const shown = [
    "parent",
    "description",
    "schedule",
    ...violationsUnder(submit.error, "rules").map((v) => v.field),
  ];
  const listProblems = violationsAt(submit.error, "rules");
  return (
    <section className="card form-card" aria-labelledby="retention-form-heading">
      <h3 id="retention-form-heading">{editing ? "Edit retention policy" : "Add a retention policy"}</h3>
      <p className="muted">
        A tag is kept when any rule keeps it; a run deletes every other tag under the policy's scope.
        Immutable tags are always kept. Durations like <code>720h</code> or <code>30m</code>.
      </p>
      <form onSubmit={onSubmit}>
        <ScopeSelect
          label="Applies to"
          scopes={scopes}
          value={parent}
          onChange={setParent}
          error={submit.error}
          disabled={editing !== undefined}
        />
        <TextField
          label="Description"
          field="description"
          error={submit.error}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
        <TextField
          label="Schedule"
          field="schedule"
          error={submit.error}
          value={schedule}
          onChange={(e) => setSchedule(e.target.value)}
          hint='Empty: runs only when you press Run. An interval ("24h", at least "1m") runs it on its own.'
          spellCheck={false}
        />
        {rules.map((rule, i) => (
          <RuleFields
            // biome-ignore lint/suspicious/noArrayIndexKey: rules have no identity but their place.
            key={i}
            index={i}
            rule={rule}
            error={submit.error}
            onChange={(change) => setRule(i, change)}
            onRemove={rules.length > 1 ? () => setRules((old) => old.filter((_, j) => j !== i)) : undefined}
          />
        ))}
        {listProblems.length > 0 && (
          <p className="field-error">{listProblems.map((p) => p.description).join("; ")}</p>
        )}
        <div className="button-row">
          <button
            type="button"
            className="secondary"
            disabled={rules.length >= MAX_RULES}
            onClick={() => setRules((old) => [...old, { ...EMPTY_RULE }])}
          >
            Add another rule
          </button>
        </div>
        <ApiError error={submit.error} shownFields={shown} />
        <div className="button-row">
          <button type="submit" disabled={submit.busy}>
            {submit.busy ? "Saving…" : editing ? "Save policy" : "Add policy"}
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

function RuleFields({
  index,
  rule,
  error,
  onChange,
  onRemove,
}: {
  index: number;
  rule: RuleDraft;
  error: unknown;
  onChange: (change: Partial<RuleDraft>) => void;
  onRemove: (() => void) | undefined;
}) {
  const at = `rules[${index}]`;
  const ruleProblems = violationsAt(error, at);
  const legend = `Rule ${index + 1}`;
  return (
    <fieldset className="retention-rule">
      <legend>{legend}</legend>
      <div className="rule-grid">
        <TextField
          label="Repo pattern"
          field={`${at}.repoPattern`}
          error={error}
          value={rule.repoPattern}
          onChange={(e) => onChange({ repoPattern: e.target.value })}
          hint="Glob on the repo path below the scope; empty: every repo."
          spellCheck={false}
        />
        <TextField
          label="Tag pattern"
          field={`${at}.tagPattern`}
          error={error}
          value={rule.tagPattern}
          onChange={(e) => onChange({ tagPattern: e.target.value })}
          hint="Glob on the tag; empty: every tag."
          spellCheck={false}
        />
        <TextField
          label="Keep latest"
          field={`${at}.keepLatest`}
          error={error}
          value={rule.keepLatest}
          inputMode="numeric"
          onChange={(e) => onChange({ keepLatest: e.target.value })}
          hint="The N most recently pushed of each repo."
        />
        <TextField
          label="Keep pushed within"
          field={`${at}.keepPushedWithin`}
          error={error}
          value={rule.keepPushedWithin}
          onChange={(e) => onChange({ keepPushedWithin: e.target.value })}
          hint="e.g. 720h"
          spellCheck={false}
        />
        <TextField
          label="Keep pulled within"
          field={`${at}.keepPulledWithin`}
          error={error}
          value={rule.keepPulledWithin}
          onChange={(e) => onChange({ keepPulledWithin: e.target.value })}
          hint="e.g. 168h"
          spellCheck={false}
        />
      </div>
      {ruleProblems.length > 0 && (
        <p className="field-error">{ruleProblems.map((p) => p.description).join("; ")}</p>
      )}
      {onRemove && (
        <button
          type="button"
          className="secondary small"
          onClick={onRemove}
          aria-label={`Remove ${legend.toLowerCase()}`}
        >
          Remove rule
        </button>
      )}
    </fieldset>
  );
}
