import { useState } from "react";
import type { registry } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { CheckboxField } from "../../components/checkbox-field";
import { useSubmit } from "../../components/use-submit";
import { useClient } from "../../lib/wharf-context";

const FIELDS = [
  "upstream.name",
  "upstream.url",
  "upstream.username",
  "upstream.password",
  "upstream.tag_ttl",
];

/**
 * Create an upstream under `org`, or edit `current` (its name is fixed: it names what was
 * cached). The password is write-only: the input starts empty, is cleared once saved, and an
 * edit sends it only when something was typed, so leaving it empty keeps the stored one.
 */
export function UpstreamForm({
  org,
  current,
  onSaved,
  onCancel,
}: {
  org: string;
  current?: registry.Upstream;
  onSaved: () => void;
  onCancel?: () => void;
}) {
  const client = useClient();
  const [name, setName] = useState(current?.name ?? "");
  const [url, setUrl] = useState(current?.url ?? "");
  const [username, setUsername] = useState(current?.username ?? "");
  const [password, setPassword] = useState("");
  const [tagTtl, setTagTtl] = useState(current?.tagTtl ?? "");
  const [clearPassword, setClearPassword] = useState(false);
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    if (current) {
      await client.registry.upstreams.updateUpstream({
        upstream: {
          uid: current.uid,
          url: url.trim(),
          username: username.trim(),
          password: clearPassword ? "" : password,
          tagTtl: tagTtl.trim(),
        },
        // The password goes only when typed or removed: the mask path with "" removes it.
        updateMask: {
          paths: ["url", "username", "tag_ttl", ...(password || clearPassword ? ["password"] : [])],
        },
      });
    } else {
      await client.registry.upstreams.createUpstream({
        parent: org,
        upstream: {
          name: name.trim(),
          url: url.trim(),
          username: username.trim(),
          password,
          tagTtl: tagTtl.trim(),
        },
      });
      setName("");
      setUrl("");
      setUsername("");
      setTagTtl("");
    }
    setPassword("");
    onSaved();
  });
  const headingId = current ? `edit-upstream-${current.uid}` : "create-upstream-heading";
  return (
    <section className="card form-card" aria-labelledby={headingId}>
      <h3 id={headingId}>{current ? `Edit upstream ${current.name}` : "Add an upstream"}</h3>
      <form onSubmit={onSubmit}>
        {!current && (
          <TextField
            label="Name"
            field="upstream.name"
            error={submit.error}
            value={name}
            onChange={(e) => setName(e.target.value)}
            hint="One path component: pulls of <org>/<name>/<path> are served from the upstream."
            spellCheck={false}
            autoCapitalize="off"
            required
          />
        )}
        <TextField
          label="URL"
          field="upstream.url"
          type="url"
          error={submit.error}
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://registry-1.docker.io"
          required
        />
        <TextField
          label="Username"
          field="upstream.username"
          error={submit.error}
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          hint="Empty for anonymous pulls."
          autoComplete="off"
        />
        <TextField
          label="Password"
          field="upstream.password"
          type="password"
          error={submit.error}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="new-password"
          disabled={clearPassword}
          hint={
            current?.hasPassword
              ? "A password is stored (never shown). Leave empty to keep it; type to replace it."
              : "Write-only: stored sealed and never shown again."
          }
        />
        {current?.hasPassword && (
          <CheckboxField
            label="Remove the stored password"
            checked={clearPassword}
            onChange={setClearPassword}
          />
        )}
        <TextField
          label="Tag TTL"
          field="upstream.tag_ttl"
          error={submit.error}
          value={tagTtl}
          onChange={(e) => setTagTtl(e.target.value)}
          placeholder="10m"
          hint="How long a cached tag is served before the upstream is asked again (default 10m)."
        />
        <ApiError error={submit.error} shownFields={FIELDS} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Saving…" : current ? "Save upstream" : "Add upstream"}
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
