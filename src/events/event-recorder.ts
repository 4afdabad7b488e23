import { randomUUID } from "node:crypto";
import { create, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { auditChangeIn } from "../audit/api-audit.js";
import { createJsonEncoders } from "../codec/json-encoder.js";
import type { Principal, RequestContext } from "../core/context.js";
import { currentTraceparent } from "../core/tracing.js";
import type { Store } from "../storage/store.js";
import { apiEventType, EVENT_RESOURCES, type EventResource, type EventVerb } from "./event-types.js";

/** Who caused an event: `actor` of the CloudEvent body. */
export interface EventActor {
  /** The identity uid of the caller ("" for anonymous registry pulls). */
  subject: string;
  /** The `act` claim of the caller's token (the upstream token it was exchanged from), if any. */
  act?: Record<string, unknown>;
}

/** One change of an API resource, as a service reports it. */
export interface ApiChange<D extends DescMessage> {
  resource: EventResource;
  verb: EventVerb;
  /** `ce-subject`: the resource's uid. */
  subject: string;
  /** `ce-group`: the uidp subscriptions match against (the parent, or the group itself). */
  group: string;
  /** The body's message type (`bodytype`): the resource for creates and updates, the request for deletes. */
  schema: D;
  body: MessageInitShape<D>;
}

/** One registry data-plane event (push or pull). */
export interface RegistryChange {
  type: string;
  /** The repo's uid. */
  subject: string;
  /** The repo's group. */
  group: string;
  actor: EventActor;
  /** CloudEvents extensions such as `digest` and `mediatype`. */
  extensions: Record<string, string>;
  body: Record<string, unknown>;
  time: number;
}

/**
 * Writes events into the outbox. Every call must be given the transaction handle of the change it
 * reports, so the event commits or rolls back with it (no change without its event, no event
 * without its change). When no subscription wants the event, nothing is written; the audit record
 * of an audited API call is written in any case (`change`, ADR 0048). With tracing on,
 * each event carries the `traceparent` extension of the span it was recorded in (ADR 0042).
 */
export interface EventRecorder {
  /** Records one API change by the caller of `ctx` (a request's context, or the registry's caller and clock). */
  change<D extends DescMessage>(tx: Store, ctx: ChangeContext, change: ApiChange<D>): Promise<void>;
  /** Records one registry push or pull. */
  registry(tx: Store, change: RegistryChange): Promise<void>;
}

/**
 * Who made a change, and when: a RequestContext satisfies it. Its `signal`, when there is one,
 * stops a recorded mutation (see recordedMutation); the registry's writes have none. Its `audit`,
 * on a mutating API call, makes the first change write the call's audit record (ADR 0048).
 */
export type ChangeContext = Pick<RequestContext, "principal" | "clock" | "audit"> & {
  readonly signal?: AbortSignal;
};

/** The `actor` of a request: its principal's identity and `act` claim. */
export function actorOf(ctx: ChangeContext): EventActor {
  return actorOfPrincipal(ctx.principal);
}

/** The `actor` of a verified caller ({subject: ""} for anonymous ones). */
export function actorOfPrincipal(principal: Principal | undefined): EventActor {
  if (!principal) return { subject: "" };
  const act = principal.claims.act;
  return typeof act === "object" && act !== null && !Array.isArray(act)
    ? { subject: principal.identityUid, act: act as Record<string, unknown> }
    : { subject: principal.identityUid };
}

// What `toJson` writes with default options, from encoders compiled once per message type (no
// registry: event bodies are API resources and requests, which hold no google.protobuf.Any).
const jsonEncoderOf = createJsonEncoders(undefined);

/** `{actor, body}`, with `act` omitted when empty (as the hosted service's Occurrence does). */
function occurrence(actor: EventActor, body: unknown): string {
  const a: EventActor = actor.act && Object.keys(actor.act).length > 0 ? actor : { subject: actor.subject };
  return JSON.stringify({ actor: a, body });
}

/**
 * `extensions` plus, with tracing on, the CloudEvents distributed-tracing extension `traceparent`:
 * the span the change is made in (its transaction's), which the event's deliveries continue.
 */
function withTraceparent(extensions: Record<string, string>): Record<string, string> {
  const traceparent = currentTraceparent();
  return traceparent === undefined ? extensions : { ...extensions, traceparent };
}

/**
 * The recorder over the stores given to it per call. `apiUrl` and `registryUrl` (the public URLs)
 * give `ce-source`: the API collection URL, or the registry's URL.
 */
export function createEventRecorder(opts: {
  apiUrl: string;
  registryUrl: string;
  /** Told when an event was written (e.g. to wake the dispatcher once the change commits). */
  appended?: () => void;
}): EventRecorder {
  // One pending wake-up at a time: a pull batch appends thousands of events in one transaction.
  let wakeScheduled = false;
  const wake = () => {
    wakeScheduled = false;
    opts.appended?.();
  };
  const wrote = (deliveries: number) => {
    if (deliveries === 0 || !opts.appended || wakeScheduled) return;
    // After a macrotask the change's transaction has usually committed; the dispatcher's poll catches the rest.
    wakeScheduled = true;
    setTimeout(wake, 0);
  };
  return {
    async change(tx, ctx, change) {
      await auditChangeIn(tx, ctx, { resource: change.subject, group: change.group });
      const deliveries = await tx.events.append({
        id: randomUUID(),
        type: apiEventType(change.resource, change.verb),
        source: `${opts.apiUrl}${EVENT_RESOURCES[change.resource].collection}`,
        subject: change.subject,
        groupUid: change.group,
        time: ctx.clock.now(),
        extensions: withTraceparent({ bodytype: change.schema.typeName }),
        data: () =>
          occurrence(actorOf(ctx), jsonEncoderOf(change.schema)(create(change.schema, change.body))),
      });
      wrote(deliveries);
    },

    async registry(tx, change) {
      const deliveries = await tx.events.append({
        id: randomUUID(),
        type: change.type,
        source: opts.registryUrl,
        subject: change.subject,
        groupUid: change.group,
        time: change.time,
        extensions: withTraceparent(change.extensions),
        data: () => occurrence(change.actor, change.body),
      });
      wrote(deliveries);
    },
  };
}
