import { InvalidDigestError } from "../content-errors.js";
import { type Digest, parseDigest } from "../digest.js";
import { TAG_NAME_PATTERN } from "../names.js";
import { RemoteError } from "./remote-registry.js";

/** A repository name of the distribution spec (path components of lowercase words and separators). */
const REPOSITORY_NAME = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const MAX_REPOSITORY_LENGTH = 255;

/** `repo` under `prefix` (the remote URL's path), checked; RemoteError `refused` (nothing sent) when not a name. */
export function remoteRepo(prefix: string, repo: string, what: string): string {
  const full = prefix === "" ? repo : `${prefix}/${repo}`;
  if (!REPOSITORY_NAME.test(repo) || full.length > MAX_REPOSITORY_LENGTH) {
    throw new RemoteError("refused", `${what}: "${clip(repo)}" is not a repository name`);
  }
  return full;
}

/** The path prefix of a registry URL (`/team/` → `team`); undefined when it is not a repository path. */
export function repoPrefix(url: URL): string | undefined {
  const prefix = url.pathname.replace(/^\/+|\/+$/g, "");
  if (prefix === "") return "";
  return REPOSITORY_NAME.test(prefix) ? prefix : undefined;
}

/** `digest` parsed; RemoteError `refused` when it is not a supported digest. */
export function digestArgument(digest: string, what: string): Digest {
  try {
    return parseDigest(digest);
  } catch (err) {
    if (err instanceof InvalidDigestError) throw new RemoteError("refused", `${what}: ${err.message}`);
    throw err;
  }
}

/** A manifest reference: a digest (parsed) or a tag; RemoteError `refused` when neither. */
export function manifestReference(reference: string, what: string): { digest?: Digest; tag?: string } {
  if (reference.includes(":")) return { digest: digestArgument(reference, what) };
  if (!TAG_NAME_PATTERN.test(reference)) {
    throw new RemoteError("refused", `${what}: "${clip(reference)}" is neither a tag nor a digest`);
  }
  return { tag: reference };
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
