import { useState } from "react";
import { listAll, registry } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import { parentOf, useScopes } from "../../components/scopes";
import { TimeText } from "../../components/time-text";
import type { RouteParams } from "../../lib/route-params";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { PolicyForm } from "./policy-form";
import { SupplyChainLayout } from "./supply-chain-layout";

const { Policy_Mode: Mode, Policy_Severity: Severity } = registry;
const MAX_POLICIES = 500;

/** The rules a policy turns on, as short phrases. */
export function policyRules(p: registry.Policy): string[] {
  return [
    p.requireSignature ? "signature required" : "",
    p.denySeverity !== Severity.SEVERITY_UNSPECIFIED
      ? `deny ${Severity[p.denySeverity]}+${p.onlyFixable ? " (fixable)" : ""}`
      : "",
    p.denyEol ? "deny end of life" : "",
    p.requireSbom ? "SBOM required" : "",
  ].filter(Boolean);
}

/**
 * `/supply-chain/policies/<org uid>`: the pull policies anywhere in the organization, add, edit,
 * delete. A policy is checked on every pull of an image under its place.
 */
export default function PoliciesPage(params: RouteParams) {
  const org = params["*"] ?? "";
  const client = useClient();
  const info = useQuery(
    () => (org ? client.iam.groups.getGroup({ uid: org }) : Promise.resolve(undefined)),
    [client, org],
  );
  return (
    <SupplyChainLayout section="policies" org={org} title={info.data?.name}>
      <ApiError error={info.error} />
      {info.data && <Policies org={org} />}
    </SupplyChainLayout>
  );
}

function Policies({ org }: { org: string }) {
  const client = useClient();
  const scopes = useScopes(org);
  const [editing, setEditing] = useState<registry.Policy>();
  const [created, setCreated] = useState(0);
  const policies = useQuery(
    () =>
      firstItems(
        listAll(client.registry.policies.listPolicies, { uidp: { descendantsOf: org }, orderBy: "name" }),
        MAX_POLICIES,
      ),
    [client, org],
  );
  return (
    <>
      <p>
        Every pull of an image under a policy's place is checked against it: an enforced policy refuses the
        pull and names each failed rule, a warning one serves it with a <code>Warning</code> header. The
        platform administrator and exempt identities are never blocked.
      </p>
      <h2>Policies</h2>
      <ResourceList
        query={policies}
        what="pull policies"
        columns={["Name", "Applies under", "Mode", "Rules", "Exempt", "Updated", "Actions"]}
        empty={
          <EmptyState title="No pull policies">
            <p>Add a policy below, e.g. enforce signatures by your release key.</p>
          </EmptyState>
        }
        row={(p) => (
          <tr key={p.uid} data-testid="policy-row">
            <th scope="row">{p.name}</th>
            <td>{scopes.data?.pathOf(parentOf(p.uid)) ?? parentOf(p.uid)}</td>
            <td>
              <span className={p.mode === Mode.ENFORCE ? "badge danger" : "badge warn"}>{Mode[p.mode]}</span>
            </td>
            <td>
              {policyRules(p).length > 0 ? (
                <ul className="rule-list">
                  {policyRules(p).map((r) => (
                    <li key={r}>{r}</li>
                  ))}
                </ul>
              ) : (
                <span className="muted">no rules</span>
              )}
            </td>
            <td>{p.exemptIdentities.length}</td>
            <td>
              <TimeText value={p.updateTime} />
            </td>
            <td className="actions">
              <button
                type="button"
                className="secondary"
                aria-label={`Edit policy ${p.name}`}
                onClick={() => setEditing(p)}
              >
                Edit
              </button>{" "}
              <ConfirmDelete
                what={`policy ${p.name}`}
                onConfirm={() => client.registry.policies.deletePolicy({ uid: p.uid })}
                onDeleted={policies.reload}
              />
            </td>
          </tr>
        )}
      />
      <ApiError error={scopes.error} />
      {editing && scopes.data && (
        <PolicyForm
          key={editing.uid}
          org={org}
          scopes={scopes.data.list}
          current={editing}
          onSaved={() => {
            setEditing(undefined);
            policies.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {scopes.data && (
        <PolicyForm
          key={`create-${created}`}
          org={org}
          scopes={scopes.data.list}
          onSaved={() => {
            setCreated((n) => n + 1);
            policies.reload();
          }}
        />
      )}
    </>
  );
}
