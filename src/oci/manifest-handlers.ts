import type { Principal } from "../core/context.js";
import { pullEvent, pushEvent, type RegistryEventFacts } from "../events/registry-events.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { PUBLIC_TAGS } from "../registry/data-plane/public-content.js";
import type { StoredManifest } from "../registry/data-plane/registry-content.js";
import type { ResolvedName } from "../registry/data-plane/repo-resolver.js";
import { digestOf, isDigest, parseDigest } from "../registry/digest.js";
import { MAX_MANIFEST_BYTES, parseManifest } from "../registry/manifest-parser.js";
import { quotaEventSink } from "../registry/quotas/storage-quota.js";
import { OciError, ociError } from "./oci-errors.js";
import { cachedPullOf } from "./pull-through-edge.js";
import { readBody } from "./read-body.js";
import { auditFacts, authorize, type Exchange, existingRepo, type RegistryDeps } from "./registry-request.js";
import { TAG } from "./routes.js";

type Reference = { digest: string } | { tag: string };

/**
 * Parses the reference of a manifest PUT: a digest, or a tag; anything else is 400
 * (DIGEST_INVALID for a malformed or unsupported digest, else MANIFEST_INVALID).
 */
function parseReference(reference: string): Reference {
  if (isDigest(reference)) return { digest: parseDigest(reference).value };
  if (!TAG.test(reference))
    throw ociError("MANIFEST_INVALID", `"${reference.slice(0, 130)}" is neither a tag nor a digest`);
  return { tag: reference };
}

/**
 * The reference of a manifest GET, HEAD or DELETE, or undefined when it is neither a valid tag nor
 * a supported digest: it can name no manifest, so the caller answers 404 MANIFEST_UNKNOWN (what
 * the OCI conformance suite expects of `.INVALID_MANIFEST_NAME`), where a PUT answers 400.
 */
function readReference(reference: string): Reference | undefined {
  try {
    return parseReference(reference);
  } catch {
    return undefined;
  }
}

/** How the audit log names a manifest reference: `<repository>:<tag>` or `<repository>@<digest>`. */
export function referenceName(name: string, reference: string): string {
  return isDigest(reference) ? `${name}@${reference}` : `${name}:${reference}`;
}

function unknownReference(reference: string, name: string): OciError {
  return ociError("MANIFEST_UNKNOWN", `"${reference.slice(0, 130)}" names no manifest in ${name}`);
}

/**
 * Answers the pull-by-reference public rule (a named function: no closure per request). A public
 * tag of a pull-through cache's repo that does not exist yet is public too: the first anonymous
 * pull creates it (ADR 0052), as an authenticated one would.
 */
function publicManifest(deps: RegistryDeps, reference: string) {
  return async (r: ResolvedName) => {
    if (r.repo) return deps.publicContent.manifest(r.repo.uid, reference);
    if (!PUBLIC_TAGS.includes(reference) || deps.pullThrough === undefined) return false;
    return (await deps.pullThrough.target(r.name)) !== undefined;
  };
}

/**
 * The manifest a reference names in `repo`, or MANIFEST_UNKNOWN. A tag is looked up in the store on
 * every request (a moved tag is seen at once); the manifest it names comes from the cache when
 * there, since a tag always names a stored manifest and a digest's bytes never change. A digest
 * reference reads the store, which alone knows whether the manifest is still there.
 */
async function manifestOfReference(
  deps: RegistryDeps,
  repo: { uid: string; name: string },
  name: string,
  reference: string,
): Promise<StoredManifest> {
  const ref = readReference(reference);
  if (ref === undefined) throw unknownReference(reference, name);
  let digest: string;
  if ("digest" in ref) digest = ref.digest;
  else {
    const tagged = await deps.content.tagDigest(repo.uid, ref.tag);
    if (tagged === undefined) throw ociError("MANIFEST_UNKNOWN", `tag ${ref.tag} is not in ${repo.name}`);
    digest = tagged;
    const hit = deps.content.cachedManifest(repo.uid, digest);
    if (hit) return hit;
  }
  const manifest = await deps.content.manifest(repo.uid, digest);
  if (!manifest) throw ociError("MANIFEST_UNKNOWN", `manifest ${digest} is not in ${name}`);
  return manifest;
}

/**
 * The repo and manifest a pull of `reference` serves: in an upstream's namespace, through the
 * pull-through cache (which fetches and records what is missing or stale, ADR 0052); else as stored.
 */
async function servedManifest(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  reference: string,
  resolved: ResolvedName,
  principal: Principal | undefined,
): Promise<{ repo: NonNullable<ResolvedName["repo"]>; manifest: StoredManifest }> {
  const cached = await cachedPullOf(deps, ex, name, resolved, principal);
  if (cached === undefined || deps.pullThrough === undefined) {
    const repo = existingRepo(resolved);
    return { repo, manifest: await manifestOfReference(deps, repo, name, reference) };
  }
  const ref = readReference(reference);
  if (ref === undefined) throw unknownReference(reference, name);
  const local = await deps.pullThrough.manifest(cached, ref);
  const manifest = await deps.content.manifest(local.repo.uid, local.digest);
  if (!manifest) throw ociError("MANIFEST_UNKNOWN", `manifest ${local.digest} is not in ${name}`);
  return { repo: local.repo, manifest };
}

/**
 * Asks the pull policies about a pull (ADR 0058): throws 403 DENIED naming each ENFORCE policy's
 * failed rules (the refusal's audit record names them too); answers the `Warning` header values of
 * WARN policies (and queues their audit record), or undefined when no policy acts on the pull.
 */
async function pullPolicyWarnings(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  reference: string,
  repoUid: string,
  manifest: StoredManifest,
  principal: Principal | undefined,
): Promise<string[] | undefined> {
  if (deps.pullPolicy === undefined) return undefined;
  const verdict = await deps.pullPolicy.checkPull({
    repoUid,
    repository: name,
    digest: manifest.digest,
    tag: isDigest(reference) ? undefined : reference,
    content: manifest.content,
    principal,
  });
  if (verdict === undefined) return undefined;
  if (verdict.deniedMessage !== undefined) {
    const err = ociError("DENIED", verdict.deniedMessage, {
      violations: verdict.violations.map((v) => ({
        policy: v.policy,
        mode: v.mode,
        rule: v.rule,
        detail: v.detail,
      })),
    });
    err.auditReason = verdict.auditReason;
    throw err;
  }
  deps.audit?.warned(
    auditFacts(ex, principal),
    { resource: referenceName(name, reference), repoUid },
    verdict.auditReason,
  );
  return verdict.warnings;
}

/**
 * GET/HEAD `/v2/<name>/manifests/<reference>`: the stored bytes with their media type and digest;
 * 404 MANIFEST_UNKNOWN for a reference that names none (an invalid one included).
 */
export async function getManifest(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  reference: string,
): Promise<void> {
  const { caller, resolved } = await authorize(deps, ex, name, "pull", {
    publicFallback: publicManifest(deps, reference),
  });
  const { repo, manifest } = await servedManifest(deps, ex, name, reference, resolved, caller.principal);
  const warnings = await pullPolicyWarnings(deps, ex, name, reference, repo.uid, manifest, caller.principal);
  // One `Warning` field line per WARN policy.
  if (warnings !== undefined) ex.res.setHeader("warning", warnings);
  ex.res.writeHead(200, {
    "content-type": manifest.mediaType,
    "content-length": manifest.content.byteLength,
    "docker-content-digest": manifest.digest,
    etag: `"${manifest.digest}"`,
  });
  ex.res.end(ex.head ? undefined : manifest.content);
  if (!ex.head && deps.audit?.pulls) {
    deps.audit.pulled(auditFacts(ex, caller.principal), {
      resource: referenceName(name, reference),
      repoUid: repo.uid,
    });
  }
  if (!ex.head) {
    const time = deps.clock.now();
    deps.pullEvents.pulled(
      isDigest(reference)
        ? { repoUid: repo.uid, digest: manifest.digest, time }
        : { repoUid: repo.uid, tag: reference, time },
    );
    deps.pullEvents.add(repo.groupUid, () =>
      pullEvent({
        req: ex.req,
        clientAddress: ex.clientAddress,
        principal: caller.principal,
        repository: name,
        repoUid: repo.uid,
        groupUid: repo.groupUid,
        digest: manifest.digest,
        mediaType: manifest.mediaType,
        ...(isDigest(reference) ? {} : { tag: reference }),
        time,
      }),
    );
  }
}

/**
 * PUT `/v2/<name>/manifests/<reference>`: validates the manifest (≤ 4 MiB, known media type, every
 * referenced blob and child manifest present in the repo, digest matching a digest reference),
 * stores it and, for a tag, points the tag at it — one transaction, which also appends the tag
 * history row when the tag moves. 201 with Location, Docker-Content-Digest and (with a subject)
 * OCI-Subject.
 */
export async function putManifest(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  reference: string,
): Promise<void> {
  const { caller, resolved } = await authorize(deps, ex, name, "push");
  const ref = parseReference(reference);
  const content = await readBody(ex.req, MAX_MANIFEST_BYTES, () => {
    throw new OciError(
      "SIZE_INVALID",
      `manifests are limited to ${MAX_MANIFEST_BYTES} bytes`,
      undefined,
      {},
      413,
    );
  });
  const digest =
    "digest" in ref ? digestOf(content, parseDigest(ref.digest).algorithm) : digestOf(content, "sha256");
  if ("digest" in ref && digest !== ref.digest) {
    throw ociError("DIGEST_INVALID", `manifest digest is ${digest}, not ${ref.digest}`);
  }
  const parsed = parseManifest(content, ex.req.headers["content-type"]);
  const repo = await deps.resolver.ensureRepo(resolved, caller.principal);
  const now = deps.clock.now();
  const facts: RegistryEventFacts = {
    req: ex.req,
    clientAddress: ex.clientAddress,
    principal: caller.principal,
    repository: name,
    repoUid: repo.uid,
    groupUid: repo.groupUid,
    digest,
    mediaType: parsed.mediaType,
    ...("tag" in ref ? { tag: ref.tag } : {}),
    time: now,
  };
  await deps.content.pushManifest({
    repo,
    name,
    digest,
    content,
    parsed,
    ...("tag" in ref ? { tag: ref.tag } : {}),
    now,
    recordPush: async (tx, previous) => {
      await deps.events.registry(tx, pushEvent(facts, previous));
      await deps.audit?.changed(tx, "registry.push", auditFacts(ex, caller.principal), {
        resource: referenceName(name, "tag" in ref ? ref.tag : digest),
        repoUid: repo.uid,
      });
    },
    onQuota: quotaEventSink(deps.events, { principal: caller.principal, clock: deps.clock }),
  });
  ex.res.writeHead(201, {
    location: `/v2/${name}/manifests/${digest}`,
    "docker-content-digest": digest,
    "content-length": 0,
    ...(parsed.subject ? { "oci-subject": parsed.subject.digest } : {}),
  });
  ex.res.end();
  if (parsed.subject && caller.principal && deps.vulnReferrers) {
    void deps.vulnReferrers({ repoUid: repo.uid, parsed, principal: caller.principal, digest });
  }
}

/**
 * DELETE `/v2/<name>/manifests/<reference>`: by tag, deletes the tag (CAP_TAG_DELETE); by digest,
 * deletes the manifest and every tag pointing at it (CAP_MANIFEST_DELETE), each tag delete
 * recorded in the tag history. 202. A tag an immutability rule protects is 403 DENIED naming the
 * tag and the rule (nothing deleted).
 */
export async function deleteManifest(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  reference: string,
): Promise<void> {
  const ref = readReference(reference);
  const instead = ref !== undefined && "tag" in ref ? [Capability.CAP_TAG_DELETE] : undefined;
  const { caller, resolved } = await authorize(deps, ex, name, "delete", { instead });
  const repo = existingRepo(resolved);
  if (ref === undefined) throw unknownReference(reference, name);
  const audit = deps.audit;
  const audited =
    audit === undefined
      ? undefined
      : (tx: Parameters<typeof audit.changed>[0]) =>
          audit.changed(tx, "registry.delete", auditFacts(ex, caller.principal), {
            resource: referenceName(name, reference),
            repoUid: repo.uid,
          });
  if ("tag" in ref) {
    if (!(await deps.content.deleteTag(repo.uid, ref.tag, caller.principal, name, audited))) {
      throw ociError("MANIFEST_UNKNOWN", `tag ${ref.tag} is not in ${name}`);
    }
  } else if (!(await deps.content.deleteManifest(repo.uid, ref.digest, caller.principal, name, audited))) {
    throw ociError("MANIFEST_UNKNOWN", `manifest ${ref.digest} is not in ${name}`);
  }
  ex.res.writeHead(202, { "content-length": 0 });
  ex.res.end();
}
