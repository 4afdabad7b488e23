import { useState } from "react";
import { listAll } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import { ScopeSelect } from "../../components/scope-select";
import { parentOf, type Scope, useScopes } from "../../components/scopes";
import { TimeText } from "../../components/time-text";
import { useSubmit } from "../../components/use-submit";
import type { RouteParams } from "../../lib/route-params";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { PemField } from "./pem-field";
import { SupplyChainLayout } from "./supply-chain-layout";

const MAX_KEYS = 500;

/**
 * `/supply-chain/keys/<org uid>`: the signing keys trusted anywhere in the organization (at it, a
 * folder or a repository), with algorithm and fingerprint; add a public key, delete one.
 */
export default function SigningKeysPage(params: RouteParams) {
  const org = params["*"] ?? "";
  const client = useClient();
  const info = useQuery(
    () => (org ? client.iam.groups.getGroup({ uid: org }) : Promise.resolve(undefined)),
    [client, org],
  );
  return (
    <SupplyChainLayout section="keys" org={org} title={info.data?.name}>
      <ApiError error={info.error} />
      {info.data && <SigningKeys org={org} />}
    </SupplyChainLayout>
  );
}

function SigningKeys({ org }: { org: string }) {
  const client = useClient();
  const scopes = useScopes(org);
  const keys = useQuery(
    () =>
      firstItems(
        listAll(client.registry.signingKeys.listSigningKeys, {
          uidp: { descendantsOf: org },
          orderBy: "name",
        }),
        MAX_KEYS,
      ),
    [client, org],
  );
  return (
    <>
      <p>
        A signature verified by a key registered at an image's repository or above marks the image signed;
        pull policies can require it.
      </p>
      <h2>Keys</h2>
      <ResourceList
        query={keys}
        what="signing keys"
        columns={["Name", "Trusted at", "Algorithm", "Fingerprint", "Added", "Actions"]}
        empty={
          <EmptyState title="No signing keys">
            <p>
              Add the public key your images are signed with (<code>cosign.pub</code>) below.
            </p>
          </EmptyState>
        }
        row={(k) => (
          <tr key={k.uid} data-testid="key-row">
            <th scope="row">{k.name}</th>
            <td>{scopes.data?.pathOf(parentOf(k.uid)) ?? parentOf(k.uid)}</td>
            <td>{k.algorithm}</td>
            <td>
              <code className="fingerprint">{k.fingerprint}</code>
            </td>
            <td>
              <TimeText value={k.createTime} />
            </td>
            <td className="actions">
              <ConfirmDelete
                what={`signing key ${k.name}`}
                onConfirm={() => client.registry.signingKeys.deleteSigningKey({ uid: k.uid })}
                onDeleted={keys.reload}
              />
            </td>
          </tr>
        )}
      />
      <ApiError error={scopes.error} />
      {scopes.data && <AddKeyForm scopes={scopes.data.list} onAdded={keys.reload} />}
    </>
  );
}

function AddKeyForm({ scopes, onAdded }: { scopes: readonly Scope[]; onAdded: () => void }) {
  const client = useClient();
  const [parent, setParent] = useState(scopes[0]?.uid ?? "");
  const [name, setName] = useState("");
  const [pem, setPem] = useState("");
  const submit = useSubmit();
  const onSubmit = submit.handler(async () => {
    await client.registry.signingKeys.createSigningKey({
      parent,
      signingKey: { name: name.trim(), publicKeyPem: pem },
    });
    setName("");
    setPem("");
    onAdded();
  });
  return (
    <section className="card form-card" aria-labelledby="add-key-heading">
      <h3 id="add-key-heading">Add a signing key</h3>
      <form onSubmit={onSubmit}>
        <ScopeSelect
          label="Trusted at"
          scopes={scopes}
          value={parent}
          error={submit.error}
          onChange={setParent}
        />
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
        <PemField
          label="Public key (PEM)"
          field="publicKeyPem"
          error={submit.error}
          value={pem}
          onChange={setPem}
          hint="ECDSA P-256/P-384, Ed25519 or RSA ≥ 2048, as cosign.pub holds it. Never paste a private key."
        />
        <ApiError error={submit.error} shownFields={["name", "publicKeyPem", "parent"]} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? "Adding…" : "Add key"}
        </button>
      </form>
    </section>
  );
}
