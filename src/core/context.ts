import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { Clock } from "./clock.js";

/** The verified caller of a request. */
export interface Principal {
  /** Identity uid (the token's `sub`). */
  identityUid: string;
  /** True for the built-in platform administrator, who holds every capability everywhere. */
  isAdmin: boolean;
  /** The verified token claims, for auditing and events. */
  claims: Readonly<Record<string, unknown>>;
}

/**
 * Where the caller holds some capabilities: everywhere (`all`), or in the subtrees rooted at
 * `uids` (each uid and all its descendants).
 */
export type AccessScopes = { all: true } | { all: false; uids: string[] };

/** The caller's capabilities, evaluated against the CURRENT role bindings. */
export interface Access {
  /** True when the caller holds every one of `caps` at `scope` (a binding at `scope` or an ancestor). */
  has(scope: string, caps: readonly Capability[]): Promise<boolean>;
  /** Like `has`, but throws PERMISSION_DENIED when it is false. */
  require(scope: string, caps: readonly Capability[]): Promise<void>;
  /** The subtrees where the caller holds every one of `caps` (for unscoped Lists). */
  scopesWith(caps: readonly Capability[]): Promise<AccessScopes>;
}

/** Everything a service implementation knows about the call besides its request message. */
export interface RequestContext {
  requestId: string;
  /** Undefined only for RPCs whose IAM annotation is `disabled` (Ping). */
  principal: Principal | undefined;
  access: Access;
  clock: Clock;
  /**
   * Fires when the call is given up on: its deadline passed (reason: a DEADLINE_EXCEEDED
   * DomainError) or its client went away (a CANCELLED one). The caller has then been answered, or
   * is gone: pass it to store transactions and blob reads, and check it between steps, so that the
   * work stops and nothing is committed. Made on first read (see `Cancellation`).
   */
  readonly signal: AbortSignal;
  /** The call's audit facts: set on mutating RPCs only (see CallAudit). */
  readonly audit?: CallAudit | undefined;
}

/** The principal of an authenticated RPC; throws when called for an anonymous one (a bug). */
export function principalOf(ctx: RequestContext): Principal {
  if (!ctx.principal) throw new Error("principalOf called on an unauthenticated request");
  return ctx.principal;
}

/**
 * The audit facts of one mutating API call (ADR 0048), carried on its RequestContext: the first
 * change the call records (`EventRecorder.change`) writes the call's audit record in the change's
 * transaction and sets `recorded`; the pipeline writes the record of a call that was refused or
 * that changed nothing, after the answer is known. Absent on reads: they cost nothing.
 */
export interface CallAudit {
  /** The RPC's full name (`platform.registry.v2.ReposService/DeleteRepo`). */
  readonly action: string;
  readonly requestId: string;
  /** The client's address ("" when unknown). */
  readonly sourceAddress: string;
  /** The User-Agent header ("" when none). */
  readonly userAgent: string;
  /**
   * The existing resource the request names by its `uid` (a delete, a `:run`, a `:redeliver`) and
   * its group; undefined when it names none (a create, an update). A record then names it even when
   * the call's first change is to another resource (a retention run deleting tags).
   */
  readonly target?: { resource: string; group: string } | undefined;
  /**
   * True once an OK record was written in a transaction of the call (reset when that
   * transaction rolls back through `recordedMutation`).
   */
  recorded: boolean;
}
