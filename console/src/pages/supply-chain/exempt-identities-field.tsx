import { useId, useState } from "react";
import { listAll } from "wharf/sdk";
import { violationsOf } from "../../components/api-error";
import { CheckboxField } from "../../components/checkbox-field";
import { firstItems } from "../../components/first-items";
import "../../components/panels.css";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";

/** Most identities offered. */
const MAX_IDENTITIES = 200;

/**
 * The identities a policy never applies to, as one checkbox per identity of the organization
 * `org` (an exempt uid not among them, e.g. a registered person, stays listed by its uid). When
 * the caller may not list identities it falls back to typing uids.
 */
export function ExemptIdentitiesField({
  org,
  value,
  error,
  onChange,
}: {
  org: string;
  value: readonly string[];
  error: unknown;
  onChange: (uids: string[]) => void;
}) {
  const client = useClient();
  const id = useId();
  const identities = useQuery(
    () =>
      firstItems(
        listAll(client.iam.identities.listIdentities, { uidp: { descendantsOf: org } }),
        MAX_IDENTITIES,
      ),
    [client, org],
  );
  const problems = violationsOf(error, "exempt_identities");
  const toggle = (uid: string, on: boolean) =>
    onChange(on ? [...value.filter((u) => u !== uid), uid] : value.filter((u) => u !== uid));
  const listed = identities.data?.items ?? [];
  const others = value.filter((uid) => !listed.some((i) => i.uid === uid));
  return (
    <fieldset aria-describedby={problems.length > 0 ? `${id}-error` : undefined}>
      <legend>Exempt identities</legend>
      {identities.error ? (
        <UidsInput value={value} onChange={onChange} />
      ) : (
        <div className="choices">
          {listed.map((i) => (
            <CheckboxField
              key={i.uid}
              label={i.name}
              checked={value.includes(i.uid)}
              onChange={(on) => toggle(i.uid, on)}
            />
          ))}
          {others.map((uid) => (
            <CheckboxField key={uid} label={uid} checked onChange={(on) => toggle(uid, on)} />
          ))}
          {identities.data && listed.length === 0 && others.length === 0 && (
            <span className="muted">The organization has no identities yet.</span>
          )}
        </div>
      )}
      {problems.length > 0 && (
        <small id={`${id}-error`} className="field-error">
          {problems.join("; ")}
        </small>
      )}
    </fieldset>
  );
}

/** The typed fallback: uids separated by commas or spaces, parsed as typed (the text kept as is). */
function UidsInput({ value, onChange }: { value: readonly string[]; onChange: (uids: string[]) => void }) {
  const id = useId();
  const [text, setText] = useState(value.join(", "));
  return (
    <div className="field">
      <label htmlFor={id}>Identity uids (comma or space separated)</label>
      <input
        id={id}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          onChange(e.target.value.split(/[\s,]+/).filter(Boolean));
        }}
        spellCheck={false}
      />
    </div>
  );
}
