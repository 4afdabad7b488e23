import { useState } from "react";
import { registry } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { CheckboxField } from "../../components/checkbox-field";
import { SelectField } from "../../components/select-field";
import { useSubmit } from "../../components/use-submit";
import { useClient } from "../../lib/wharf-context";

const { ReplicationRule_Direction: Direction, ReplicationRule_Trigger: Trigger } = registry;

const FIELDS = [
  "name",
  "direction",
  "remote.url",
  "remote.username",
  "remote.password",
  "repo_pattern",
  "tag_pattern",
  "destination",
  "trigger",
  "interval",
];

/** Every field an edit sends (the password only when typed: it is write-only). */
const EDIT_PATHS = [
  "name",
  "direction",
  "remote.url",
  "remote.username",
  "repo_pattern",
  "tag_pattern",
  "destination",
  "trigger",
  "interval",
  "enabled",
];

/**
 * Create a replication rule under `org`, or edit `current`. The remote password is write-only: the
 * input starts empty, is cleared once saved, and an edit sends it only when something was typed.
 */
export function ReplicationRuleForm({
  org,
  current,
  onSaved,
  onCancel,
}: {
  org: string;
  current?: registry.ReplicationRule;
  onSaved: (rule: registry.ReplicationRule) => void;
  onCancel?: () => void;
}) {
  const client = useClient();
  const [name, setName] = useState(current?.name ?? "");
  const [direction, setDirection] = useState(current?.direction ?? Direction.PUSH);
  const [url, setUrl] = useState(current?.remote?.url ?? "");
  const [username, setUsername] = useState(current?.remote?.username ?? "");
  const [password, setPassword] = useState("");
  const [repoPattern, setRepoPattern] = useState(current?.repoPattern ?? "");
  const [tagPattern, setTagPattern] = useState(current?.tagPattern ?? "");
  const [destination, setDestination] = useState(current?.destination ?? "");
  const [trigger, setTrigger] = useState(current?.trigger ?? Trigger.MANUAL);
  const [interval, setRunInterval] = useState(current?.interval ?? "");
  const [enabled, setEnabled] = useState(current?.enabled ?? true);
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    const rule = {
      name: name.trim(),
      direction,
      remote: { url: url.trim(), username: username.trim(), password },
      repoPattern: repoPattern.trim(),
      tagPattern: tagPattern.trim(),
      destination: destination.trim(),
      trigger,
      interval: trigger === Trigger.INTERVAL ? interval.trim() : "",
      enabled,
    };
    const saved = current
      ? await client.registry.replicationRules.updateReplicationRule({
          replicationRule: { ...rule, uid: current.uid },
          updateMask: { paths: [...EDIT_PATHS, ...(password ? ["remote.password"] : [])] },
        })
      : await client.registry.replicationRules.createReplicationRule({ parent: org, replicationRule: rule });
    setPassword("");
    onSaved(saved);
  });
  const headingId = current ? `edit-rule-${current.uid}` : "create-rule-heading";
  return (
    <section className="card form-card" aria-labelledby={headingId}>
      <h3 id={headingId}>{current ? `Edit rule ${current.name}` : "Add a replication rule"}</h3>
      <form onSubmit={onSubmit}>
        <TextField
          label="Name"
          field="name"
          error={submit.error}
          value={name}
          onChange={(e) => setName(e.target.value)}
          spellCheck={false}
          autoCapitalize="off"
          required
        />
        <SelectField
          label="Direction"
          field="direction"
          error={submit.error}
          value={direction}
          onChange={(e) => setDirection(Number(e.target.value))}
        >
          <option value={Direction.PUSH}>Push: copy from this organization to the remote</option>
          <option value={Direction.PULL}>Pull: copy from the remote into this organization</option>
        </SelectField>
        <TextField
          label="Remote registry URL"
          field="remote.url"
          type="url"
          error={submit.error}
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://registry.example.com"
          required
        />
        <TextField
          label="Remote username"
          field="remote.username"
          error={submit.error}
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          autoComplete="off"
        />
        <TextField
          label="Remote password"
          field="remote.password"
          type="password"
          error={submit.error}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="new-password"
          hint={
            current?.remote?.hasPassword
              ? "A password is stored (never shown). Leave empty to keep it; type to replace it."
              : "Write-only: stored sealed and never shown again."
          }
        />
        <TextField
          label="Repository pattern"
          field="repo_pattern"
          error={submit.error}
          value={repoPattern}
          onChange={(e) => setRepoPattern(e.target.value)}
          placeholder="app*"
          hint="A glob: push, on the repo path below the organization; pull, on the remote repo path."
          spellCheck={false}
        />
        <TextField
          label="Tag pattern"
          field="tag_pattern"
          error={submit.error}
          value={tagPattern}
          onChange={(e) => setTagPattern(e.target.value)}
          placeholder="v*"
          hint="A glob on tag names; empty: every tag."
          spellCheck={false}
        />
        <TextField
          label="Destination"
          field="destination"
          error={submit.error}
          value={destination}
          onChange={(e) => setDestination(e.target.value)}
          placeholder="mirror"
          hint="The path prefix the copies land under on the other side."
          spellCheck={false}
        />
        <SelectField
          label="Trigger"
          field="trigger"
          error={submit.error}
          value={trigger}
          onChange={(e) => setTrigger(Number(e.target.value))}
        >
          <option value={Trigger.MANUAL}>Manual (Run now)</option>
          <option value={Trigger.ON_PUSH}>On push (push rules only)</option>
          <option value={Trigger.INTERVAL}>At an interval</option>
        </SelectField>
        {trigger === Trigger.INTERVAL && (
          <TextField
            label="Interval"
            field="interval"
            error={submit.error}
            value={interval}
            onChange={(e) => setRunInterval(e.target.value)}
            placeholder="1h"
            required
          />
        )}
        <CheckboxField label="Enabled" checked={enabled} onChange={setEnabled} />
        <ApiError error={submit.error} shownFields={FIELDS} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Saving…" : current ? "Save rule" : "Add rule"}
        </button>{" "}
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </form>
    </section>
  );
}
