import { useState } from "react";
import { registry } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { CheckboxField } from "../../components/checkbox-field";
import { ScopeSelect } from "../../components/scope-select";
import type { Scope } from "../../components/scopes";
import { SelectField } from "../../components/select-field";
import { useSubmit } from "../../components/use-submit";
import { useClient } from "../../lib/wharf-context";
import { ExemptIdentitiesField } from "./exempt-identities-field";

const { Policy_Mode: Mode, Policy_Severity: Severity } = registry;

const FIELDS = ["name", "mode", "deny_severity", "only_fixable", "exempt_identities", "parent"];

/** Every field an edit sends: the form shows the whole policy. */
const EDIT_PATHS = [
  "name",
  "mode",
  "require_signature",
  "deny_severity",
  "only_fixable",
  "deny_eol",
  "require_sbom",
  "exempt_identities",
];

/**
 * Create a pull policy at one of `scopes`, or edit `current` (its place is fixed): mode, the rules
 * (signature, severity, EOL, SBOM) and the identities it never applies to.
 */
export function PolicyForm({
  org,
  scopes,
  current,
  onSaved,
  onCancel,
}: {
  /** The organization whose identities may be exempted. */
  org: string;
  scopes: readonly Scope[];
  current?: registry.Policy;
  onSaved: () => void;
  onCancel?: () => void;
}) {
  const client = useClient();
  const [parent, setParent] = useState(scopes[0]?.uid ?? "");
  const [name, setName] = useState(current?.name ?? "");
  const [mode, setMode] = useState(current?.mode ?? Mode.ENFORCE);
  const [requireSignature, setRequireSignature] = useState(current?.requireSignature ?? false);
  const [denySeverity, setDenySeverity] = useState(current?.denySeverity ?? Severity.SEVERITY_UNSPECIFIED);
  const [onlyFixable, setOnlyFixable] = useState(current?.onlyFixable ?? false);
  const [denyEol, setDenyEol] = useState(current?.denyEol ?? false);
  const [requireSbom, setRequireSbom] = useState(current?.requireSbom ?? false);
  const [exempt, setExempt] = useState<string[]>(current?.exemptIdentities ?? []);
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    const policy = {
      name: name.trim(),
      mode,
      requireSignature,
      denySeverity,
      onlyFixable: denySeverity === Severity.SEVERITY_UNSPECIFIED ? false : onlyFixable,
      denyEol,
      requireSbom,
      exemptIdentities: exempt,
    };
    if (current) {
      await client.registry.policies.updatePolicy({
        policy: { ...policy, uid: current.uid },
        updateMask: { paths: EDIT_PATHS },
      });
    } else {
      await client.registry.policies.createPolicy({ parent, policy });
    }
    onSaved();
  });
  const headingId = current ? `edit-policy-${current.uid}` : "create-policy-heading";
  return (
    <section className="card form-card" aria-labelledby={headingId}>
      <h3 id={headingId}>{current ? `Edit policy ${current.name}` : "Add a pull policy"}</h3>
      <form onSubmit={onSubmit}>
        {!current && (
          <ScopeSelect
            label="Applies under"
            scopes={scopes}
            value={parent}
            error={submit.error}
            onChange={setParent}
          />
        )}
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
          label="Mode"
          field="mode"
          error={submit.error}
          value={mode}
          onChange={(e) => setMode(Number(e.target.value))}
        >
          <option value={Mode.ENFORCE}>Enforce: refuse the pull</option>
          <option value={Mode.WARN}>Warn: serve it with a warning</option>
        </SelectField>
        <fieldset>
          <legend>Rules</legend>
          <CheckboxField
            label="Require a signature by a trusted key"
            checked={requireSignature}
            onChange={setRequireSignature}
          />
          <SelectField
            label="Deny vulnerabilities of at least"
            field="deny_severity"
            error={submit.error}
            value={denySeverity}
            onChange={(e) => setDenySeverity(Number(e.target.value))}
          >
            <option value={Severity.SEVERITY_UNSPECIFIED}>Off</option>
            <option value={Severity.LOW}>LOW</option>
            <option value={Severity.MEDIUM}>MEDIUM</option>
            <option value={Severity.HIGH}>HIGH</option>
            <option value={Severity.CRITICAL}>CRITICAL</option>
          </SelectField>
          {denySeverity !== Severity.SEVERITY_UNSPECIFIED && (
            <CheckboxField
              label="Only fixable vulnerabilities"
              checked={onlyFixable}
              onChange={setOnlyFixable}
            />
          )}
          <CheckboxField label="Deny end-of-life images" checked={denyEol} onChange={setDenyEol} />
          <CheckboxField label="Require an SBOM" checked={requireSbom} onChange={setRequireSbom} />
        </fieldset>
        <ExemptIdentitiesField org={org} value={exempt} error={submit.error} onChange={setExempt} />
        <ApiError error={submit.error} shownFields={FIELDS} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Saving…" : current ? "Save policy" : "Add policy"}
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
