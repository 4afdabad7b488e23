import { Code } from "@connectrpc/connect";
import type { Group } from "../../gen/platform/iam/v2/groups_pb.js";
import type { Repo } from "../../gen/platform/registry/v2/repos_pb.js";
import type { Tag } from "../../gen/platform/registry/v2/tags_pb.js";
import type { WharfClient } from "../../sdk/client.js";
import { WharfApiError } from "../../sdk/errors.js";
import { listAll } from "../../sdk/pages.js";
import { UsageError } from "./output.js";

/** Root uid: 40 hex; a child adds `/` and 16 hex per level (the server's uidp). */
const UIDP = /^[0-9a-f]{40}(?:\/[0-9a-f]{16})*$/;

/** True when `value` is a uid rather than a name. */
export function isUid(value: string): boolean {
  return UIDP.test(value);
}

/** An image reference split: `acme/app`, `acme/app:1.2`, `acme/app@sha256:…`. */
export interface ImageReference {
  /** The repository path, `ORG[/FOLDER…]/REPO`. */
  repository: string;
  tag?: string;
  digest?: string;
}

/**
 * Splits `ORG/REPO[:TAG|@DIGEST]` (a leading registry host, one with a dot or a port before the
 * first slash, is dropped). Usage error when there is no slash (no organization).
 */
export function parseImage(reference: string): ImageReference {
  let rest = reference;
  const firstSlash = rest.indexOf("/");
  const first = firstSlash < 0 ? "" : rest.slice(0, firstSlash);
  if (first.includes(".") || first.includes(":") || first === "localhost") rest = rest.slice(firstSlash + 1);
  let digest: string | undefined;
  let tag: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^[a-z0-9]+:[a-f0-9]{32,}$/.test(digest))
      throw new UsageError(`"${digest}" is not a digest (sha256:…)`);
  }
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  if (!rest.includes("/") || rest.startsWith("/") || rest.endsWith("/")) {
    throw new UsageError(`"${reference}" is not an image: expected ORG/REPO[:TAG|@DIGEST]`);
  }
  return { repository: rest, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

function notFound(kind: string, name: string): WharfApiError {
  return new WharfApiError({ code: Code.NotFound, message: `${kind} "${name}" not found` });
}

/**
 * The group (organization or folder) `ref` names: a uid as is, `ORG` an organization by name,
 * `ORG/FOLDER/…` a folder by the names down its path.
 */
export async function resolveGroup(client: WharfClient, ref: string): Promise<Group> {
  if (isUid(ref)) return client.iam.groups.getGroup({ uid: ref });
  let group: Group | undefined;
  for (const name of ref.split("/")) {
    const uidp = group ? { childrenOf: group.uid } : { inRoot: true };
    const found: Group | undefined = await first(listAll(client.iam.groups.listGroups, { uidp, name }));
    if (!found) throw notFound(group ? "folder" : "organization", ref);
    group = found;
  }
  if (!group) throw notFound("organization", ref);
  return group;
}

/** The uid of the group `ref` names (a uid is taken as is, without a call). */
export async function groupUid(client: WharfClient, ref: string): Promise<string> {
  return isUid(ref) ? ref : (await resolveGroup(client, ref)).uid;
}

/**
 * The repository `ref` names: a uid, or `ORG/REPO` (the repository's name may itself hold
 * slashes: `acme/tools/app` is the repo `tools/app` of acme, or failing that `app` of folder
 * acme/tools).
 */
export async function resolveRepo(client: WharfClient, ref: string): Promise<Repo> {
  if (isUid(ref)) return client.registry.repos.getRepo({ uid: ref });
  const parts = ref.split("/");
  for (let split = 1; split < parts.length; split++) {
    const groupPath = parts.slice(0, split).join("/");
    const name = parts.slice(split).join("/");
    let group: Group;
    try {
      group = await resolveGroup(client, groupPath);
    } catch (err) {
      if ((err as WharfApiError).code === Code.NotFound) break;
      throw err;
    }
    const repo = await first(
      listAll(client.registry.repos.listRepos, { uidp: { childrenOf: group.uid }, name }),
    );
    if (repo) return repo;
  }
  throw notFound("repository", ref);
}

/** The tag `name` of the repository `repoUid`. */
export async function resolveTag(client: WharfClient, repoUid: string, name: string): Promise<Tag> {
  const tag = await first(listAll(client.registry.tags.listTags, { uidp: { childrenOf: repoUid }, name }));
  if (!tag) throw notFound("tag", name);
  return tag;
}

async function first<T>(items: AsyncIterable<T>): Promise<T | undefined> {
  for await (const item of items) return item;
  return undefined;
}
