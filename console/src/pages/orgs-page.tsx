import { useState } from "react";
import { listAll } from "wharf/sdk";
import { ApiError } from "../components/api-error";
import { ConfirmButton } from "../components/confirm-button";
import { CreateForm } from "../components/create-form";
import { EmptyState } from "../components/empty-state";
import { Loading } from "../components/loading";
import { collect } from "../lib/collect";
import { pathWithUid } from "../lib/format";
import { Link } from "../lib/router";
import { useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";

const NAME_HINT = "Lowercase letters, digits and . _ - separators.";

/** Organizations and their folders as a tree: expand, create, delete. */
export default function OrgsPage() {
  const client = useClient();
  const orgs = useQuery(
    () => collect(listAll(client.iam.groups.listGroups, { uidp: { inRoot: true }, orderBy: "name" })),
    [client],
  );
  return (
    <main id="main">
      <h1>Organizations</h1>
      <CreateForm
        label="New organization"
        field="group.name"
        submitLabel="Create organization"
        hint={NAME_HINT}
        onCreate={async (name) => {
          await client.iam.groups.createGroup({ group: { name } });
          orgs.reload();
        }}
      />
      <ApiError error={orgs.error} />
      {orgs.loading && !orgs.data && <Loading what="Loading organizations" />}
      {orgs.data?.length === 0 && (
        <EmptyState title="No organizations yet">
          <p>
            Create one above: it becomes the first part of your images' names, e.g. <code>acme/app</code>.
          </p>
        </EmptyState>
      )}
      {orgs.data && orgs.data.length > 0 && (
        <ul className="tree" aria-label="Organizations and folders">
          {orgs.data.map((g) => (
            <GroupNode key={g.uid} uid={g.uid} name={g.name} onDeleted={orgs.reload} />
          ))}
        </ul>
      )}
    </main>
  );
}

/** One organization or folder: its link, and on demand its folders, a new-folder form, delete. */
function GroupNode({ uid, name, onDeleted }: { uid: string; name: string; onDeleted: () => void }) {
  const client = useClient();
  const [open, setOpen] = useState(false);
  const [adding, setAdding] = useState(false);
  const children = useQuery(
    () =>
      open
        ? collect(listAll(client.iam.groups.listGroups, { uidp: { childrenOf: uid }, orderBy: "name" }))
        : Promise.resolve(undefined),
    [client, uid, open],
  );
  return (
    <li>
      <div className="tree-row">
        <button
          type="button"
          className="tree-toggle"
          aria-expanded={open}
          aria-label={`${open ? "Collapse" : "Expand"} ${name}`}
          onClick={() => setOpen(!open)}
        >
          {open ? "−" : "+"}
        </button>
        <Link to={pathWithUid("/groups", uid)}>{name}</Link>
        <Link to={pathWithUid("/dashboard", uid)} className="small-text" aria-label={`Dashboard of ${name}`}>
          Dashboard
        </Link>
        <button
          type="button"
          className="secondary small"
          onClick={() => setAdding(!adding)}
          aria-expanded={adding}
          aria-label={`New folder in ${name}`}
        >
          New folder
        </button>
        <ConfirmButton
          label={`Delete ${name}`}
          title={`Delete ${name}?`}
          onConfirm={async () => {
            await client.iam.groups.deleteGroup({ uid });
            onDeleted();
          }}
        >
          <p>
            This deletes the group <strong>{name}</strong>. A group that still holds folders or repositories
            cannot be deleted.
          </p>
        </ConfirmButton>
      </div>
      {adding && (
        <CreateForm
          label={`New folder in ${name}`}
          field="group.name"
          submitLabel="Create folder"
          hint={NAME_HINT}
          onCreate={async (folder) => {
            await client.iam.groups.createGroup({ parent: uid, group: { name: folder } });
            setAdding(false);
            setOpen(true);
            children.reload();
          }}
        />
      )}
      {open && (
        <>
          <ApiError error={children.error} />
          {children.data && children.data.length > 0 && (
            <ul className="tree-children">
              {children.data.map((g) => (
                <GroupNode key={g.uid} uid={g.uid} name={g.name} onDeleted={children.reload} />
              ))}
            </ul>
          )}
          {children.data?.length === 0 && <p className="muted tree-empty">No folders.</p>}
        </>
      )}
    </li>
  );
}
