import { RemoteError, type RemoteRegistry } from "../remote/remote-registry.js";
import { type LocalEndpointDeps, localEndpoint } from "./local-endpoint.js";
import { remoteEndpoint } from "./remote-endpoint.js";
import type {
  ReplicationCopier,
  ReplicationProgress,
  ReplicationRuleConfig,
} from "./replication-contract.js";
import { patternMatcher, pullRepos, pushRepos, type RepoPair } from "./replication-plan.js";
import { replicationPrincipal, replicationUserAgent } from "./replication-principal.js";
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from "./replication-retry.js";
import { copyTag, RunMemory, type TagCopyContext } from "./tag-copy.js";
import { type WatchedRemote, watchRemote } from "./watched-remote.js";

/** What the copier is built from: Wharf's registry content and push path, and the remote client. */
export interface ReplicationCopierDeps extends LocalEndpointDeps {
  /** The client for a rule's remote (its URL and opened credentials); closed by the copier after the run. */
  remoteFor(rule: ReplicationRuleConfig): RemoteRegistry;
  /** How each tag is retried (default DEFAULT_RETRY: 3 attempts, 1 s and 4 s apart). */
  retry?: RetryPolicy | undefined;
}

/**
 * A run that could not proceed at all: the remote refused its first request (bad credentials, no
 * access, an address the policy refuses) or could not be reached for it, or the repos to copy
 * could not be listed. The failure
 * is already recorded through `progress.failed` (one entry); the run is FAILED.
 */
export class ReplicationHaltedError extends Error {
  override name = "ReplicationHaltedError";
  /** Always true: the failure is in the run's errors already, do not record it again. */
  readonly recorded = true;
}

/**
 * A remote failure that, before the remote answered anything, means every request would fail the
 * same way: refused credentials or access, an address the policy refuses, or (after the first
 * tag's retries) a remote that cannot be reached at all.
 */
function failsEverything(err: unknown): boolean {
  return (
    err instanceof RemoteError &&
    (err.kind === "unauthorized" ||
      err.kind === "denied" ||
      err.kind === "address-refused" ||
      err.kind === "unreachable")
  );
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The copier of replication rules (ADR 0055). PUSH copies the organization's repos matching
 * `repoPattern` to `<destination>/<path below the organization>` on the remote; PULL copies the
 * remote's `repoPattern` (a literal path, or a glob over its catalog) to
 * `<organization>/<destination>/<remote path>` in Wharf, recorded like a push (repos and folders
 * created, tag history, push events by the rule's principal). Tags are copied one by one, each
 * with its manifest tree, blobs and referrers (see copyTag), each retried by `deps.retry`; a tag
 * that still fails is recorded (`progress.failed`) and the run goes on. A refusal of the run's
 * first remote request (or a remote unreachable for it), or a failed listing of the repos, is
 * recorded once and rejects with ReplicationHaltedError. An aborted `signal` rejects with its
 * reason at the next step.
 */
export function createReplicationCopier(deps: ReplicationCopierDeps): ReplicationCopier {
  const policy = deps.retry ?? DEFAULT_RETRY;
  return {
    async run(rule, progress, signal) {
      signal.throwIfAborted();
      const watched = watchRemote(deps.remoteFor(rule));
      try {
        await copyRule(rule, watched, progress, signal);
      } finally {
        await watched.remote.close().catch(() => undefined);
      }
    },
  };

  async function copyRule(
    rule: ReplicationRuleConfig,
    watched: WatchedRemote,
    progress: ReplicationProgress,
    signal: AbortSignal,
  ): Promise<void> {
    const local = localEndpoint(deps, {
      orgUid: rule.orgUid,
      orgName: rule.orgName,
      principal: replicationPrincipal(rule),
      userAgent: replicationUserAgent(rule),
    });
    const remote = remoteEndpoint(watched.remote);
    const push = rule.direction === "PUSH";
    const ctx: TagCopyContext = {
      source: push ? local : remote,
      target: push ? remote : local,
      progress,
      memory: new RunMemory(),
      signal,
    };
    const tagMatches = patternMatcher(rule.tagPattern === "*" ? "" : rule.tagPattern);

    /**
     * Records `err` against `reference`; with `halt`, or when the remote failed before answering
     * anything (recorded against the remote then), also ends the run.
     */
    const failed = (reference: string, err: unknown, halt: boolean): void => {
      if (signal.aborted) throw signal.reason;
      const message = messageOf(err);
      const everything = failsEverything(err) && !watched.answered();
      progress.failed({ reference: everything ? watched.remote.url : reference, message });
      if (halt || everything) throw new ReplicationHaltedError(message, { cause: err });
    };

    let repos: RepoPair[] = [];
    try {
      repos = await withRetries(policy, signal, () =>
        collect(push ? pushRepos(deps.store, rule) : pullRepos(watched.remote, rule, signal)),
      );
    } catch (err) {
      failed(push ? rule.orgName : watched.remote.url, err, true);
    }
    for (const pair of repos) {
      let tags: string[];
      try {
        tags = (
          await withRetries(policy, signal, () => collect(ctx.source.tags(pair.sourceRepo, signal)))
        ).filter(tagMatches);
      } catch (err) {
        failed(pair.sourceRepo, err, false);
        continue;
      }
      for (const tag of tags) {
        try {
          await withRetries(policy, signal, () => copyTag(ctx, pair.sourceRepo, pair.targetRepo, tag));
        } catch (err) {
          failed(`${pair.sourceRepo}:${tag}`, err, false);
        }
      }
    }
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
