import type { IncomingMessage } from "node:http";
import type { Principal } from "../core/context.js";
import type { EventActor, RegistryChange } from "./event-recorder.js";
import { actorOfPrincipal } from "./event-recorder.js";
import { REGISTRY_PULL_EVENT, REGISTRY_PUSH_EVENT } from "./event-types.js";

/** What a registry event says about the request and the manifest it moved. */
export interface RegistryEventFacts {
  /** The client's request; absent for content Wharf writes itself (replication), see `userAgent`. */
  req?: IncomingMessage | undefined;
  /** The user agent to report when there is no request (e.g. `wharf-replication`). */
  userAgent?: string | undefined;
  /** The client's address as the edge worked it out (a trusted proxy's forwarding counted); default the peer's. */
  clientAddress?: string | undefined;
  principal: Principal | undefined;
  /** The repository path as requested (`acme/team/app`). */
  repository: string;
  repoUid: string;
  groupUid: string;
  digest: string;
  mediaType: string;
  /** The tag named by the request, if any. */
  tag?: string;
  time: number;
}

/** A civil date-time without a zone (`2025-04-23T00:37:47.810`), as the hosted service's `when`. */
function civilTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1);
}

function common(facts: RegistryEventFacts): Record<string, unknown> {
  return {
    repository: facts.repository,
    repo_id: facts.repoUid,
    ...(facts.tag !== undefined ? { tag: facts.tag } : {}),
    digest: facts.digest,
    type: "manifest",
    when: civilTime(facts.time),
    remote_address: facts.clientAddress ?? facts.req?.socket.remoteAddress ?? "",
    user_agent: facts.req?.headers["user-agent"] ?? facts.userAgent ?? "",
  };
}

function change(type: string, facts: RegistryEventFacts, body: Record<string, unknown>): RegistryChange {
  const actor: EventActor = actorOfPrincipal(facts.principal);
  return {
    type,
    subject: facts.repoUid,
    group: facts.groupUid,
    actor,
    extensions: { digest: facts.digest, mediatype: facts.mediaType },
    body,
    time: facts.time,
  };
}

/**
 * `dev.wharf.registry.push.v1` for a manifest PUT; `tagPreviousDigest` is what the tag named
 * before (absent for a new tag or a push by digest). Body keys follow the hosted service's push
 * events (snake_case).
 */
export function pushEvent(facts: RegistryEventFacts, tagPreviousDigest: string | undefined): RegistryChange {
  return change(REGISTRY_PUSH_EVENT, facts, {
    ...common(facts),
    ...(tagPreviousDigest ? { tag_previous_digest: tagPreviousDigest } : {}),
  });
}

/** `dev.wharf.registry.pull.v1` for a manifest GET. */
export function pullEvent(facts: RegistryEventFacts): RegistryChange {
  return change(REGISTRY_PULL_EVENT, facts, { ...common(facts), method: "GET" });
}
