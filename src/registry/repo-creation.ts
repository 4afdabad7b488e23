import { newChildUid } from "../core/uidp.js";
import { validateDescription } from "../core/validation.js";
import type { ChangeContext, EventRecorder } from "../events/event-recorder.js";
import { RepoSchema } from "../gen/platform/registry/v2/repos_pb.js";
import { admitNewResource } from "../iam/creation-quota.js";
import type { RepoRow } from "../storage/registry-store.js";
import type { Store } from "../storage/store.js";
import { repoMessage } from "./mapping.js";
import { validateRepoName } from "./names.js";

/**
 * Throws INVALID_ARGUMENT on `name` unless a repo may be created with `name` and `description`: the
 * rule of the API's CreateRepo and of a push creating its repo. `subject` starts the description
 * (default `name`; a push names the repo: `repo name "x"`).
 */
export function validateNewRepo(name: string, description: string, subject?: string): void {
  validateRepoName(name, "name", subject);
  validateDescription(description);
}

/** The row of a new repo in group `groupUid`, with no readme. */
export function newRepoRow(groupUid: string, name: string, description: string, now: number): RepoRow {
  return {
    uid: newChildUid(groupUid),
    groupUid,
    name,
    description,
    readme: "",
    createTime: now,
    updateTime: now,
  };
}

/**
 * Creates repo `row` (validated with validateNewRepo) in transaction `tx` and records its
 * `repo.created` event there: the one create path of repos, shared by the API and by pushes. A
 * name taken in the same group is ALREADY_EXISTS (from the store).
 */
export async function createRepoIn(
  tx: Store,
  deps: { events: EventRecorder },
  ctx: ChangeContext,
  row: RepoRow,
): Promise<void> {
  await admitNewResource(tx, { resource: "repo", parentUid: row.groupUid });
  await tx.repos.insert(row);
  await deps.events.change(tx, ctx, {
    resource: "repo",
    verb: "created",
    subject: row.uid,
    group: row.groupUid,
    schema: RepoSchema,
    body: repoMessage(row),
  });
}
