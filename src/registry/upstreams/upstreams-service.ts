import { pageRequestOf, toUidpFilter } from "../../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../../core/errors.js";
import { resolveUpdateMask } from "../../core/field-mask.js";
import { type PageTokenCodec, paginate } from "../../core/list.js";
import { namedResourceList, pageEnvelope } from "../../core/list-specs.js";
import { validateGroupName } from "../../core/registry-name.js";
import type { SecretBox } from "../../core/secret-box.js";
import type { ServiceHandlers } from "../../core/service.js";
import { isRoot, newChildUid, parentOf, requireUidp } from "../../core/uidp.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import { recordedMutation } from "../../events/recorded-mutation.js";
import {
  createSinkAddressPolicy,
  NO_SINK_EXCEPTIONS,
  type SinkAddressPolicy,
} from "../../events/sink-address-policy.js";
import { type SinkResolver, systemSinkResolver } from "../../events/sink-host.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteUpstreamRequestSchema,
  UpstreamSchema,
  type UpstreamsService,
} from "../../gen/platform/registry/v2/upstreams_pb.js";
import type { Store } from "../../storage/store.js";
import type { UpstreamRow } from "../../storage/upstream-store.js";
import { validateRegistryUrl, validateRegistryUrlAddresses } from "./registry-url.js";
import { parseTagTtl, upstreamMessage, validateCredentials } from "./upstream-mapping.js";

/** What UpstreamsService is built from (the composition root provides it). */
export interface UpstreamsServiceDeps {
  /** Upstreams, the organizations they are under, and `transaction` (its `tx` is the whole Store). */
  store: Pick<Store, "groups" | "upstreams" | "transaction">;
  pageTokens: PageTokenCodec;
  /** Writes events into the outbox, in the transaction of the change they report. */
  events: EventRecorder;
  /** Seals upstream passwords before they are stored. */
  secrets: SecretBox;
  /** Whether plain-http URLs are allowed (`--events-allow-http`; default false). */
  allowHttpSinks?: boolean;
  /** Which addresses URLs may lead to: the webhook sinks' policy; default: no exceptions. */
  sinkAddresses?: SinkAddressPolicy;
  /** Resolves URL host names at create and update; default: the system resolver. */
  resolveSinkHost?: SinkResolver;
}

const UPSTREAM_LIST = namedResourceList<UpstreamRow>();

const UPSTREAM_MASK = {
  known: [
    "uid",
    "name",
    "url",
    "username",
    "password",
    "tag_ttl",
    "create_time",
    "update_time",
    "has_password",
  ],
  updatable: ["name", "url", "username", "password", "tag_ttl"],
} as const;

/**
 * UpstreamsService (ADR 0051): an organization's upstreams for the pull-through cache. Every write
 * checks the name (one registry path component), the URL (validateRegistryUrl, and the address
 * policy of webhook sinks), the credentials and the tag TTL; the password is sealed before it is
 * stored and is never answered, nor put in an event. Each change is an `upstream.<verb>` event of
 * the organization.
 */
export function createUpstreamsService(deps: UpstreamsServiceDeps): ServiceHandlers<typeof UpstreamsService> {
  const { store, secrets } = deps;
  const allowHttp = deps.allowHttpSinks ?? false;
  const policy = deps.sinkAddresses ?? createSinkAddressPolicy(NO_SINK_EXCEPTIONS);
  const resolve = deps.resolveSinkHost ?? systemSinkResolver;

  return {
    async listUpstreams(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_UPSTREAMS_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp) };
      const page = await paginate(pageRequestOf(req), filter, UPSTREAM_LIST, deps.pageTokens, (window) =>
        store.upstreams.list({ ...filter, within }, window),
      );
      return { upstreams: page.items.map(upstreamMessage), ...pageEnvelope(page) };
    },

    async getUpstream(req) {
      const row = await store.upstreams.get(req.uid);
      if (!row) throw notFound("upstream", req.uid);
      return upstreamMessage(row);
    },

    async createUpstream(req, ctx) {
      requireUidp("parent", req.parent);
      const input = req.upstream;
      if (!input) throw invalidArgument("upstream", "upstream is required");
      validateGroupName(input.name, "name");
      const url = validateRegistryUrl(input.url, allowHttp);
      validateCredentials(input.username, input.password);
      const tagTtlMs = parseTagTtl(input.tagTtl);
      await requireOrganization(req.parent);
      await validateRegistryUrlAddresses(url, policy, resolve);
      const now = ctx.clock.now();
      const row: UpstreamRow = {
        uid: newChildUid(req.parent),
        orgUid: req.parent,
        name: input.name,
        url,
        username: input.username,
        passwordSealed: await secrets.seal(input.password),
        tagTtlMs,
        createTime: now,
        updateTime: now,
      };
      const message = upstreamMessage(row);
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          if (!(await tx.groups.get(req.parent))) throw notFound("group", req.parent);
          await tx.upstreams.insert(row);
        },
        {
          resource: "upstream",
          verb: "created",
          subject: row.uid,
          group: row.orgUid,
          schema: UpstreamSchema,
          body: message,
        },
      );
      return message;
    },

    async updateUpstream(req, ctx) {
      const input = req.upstream;
      if (!input) throw invalidArgument("upstream", "upstream is required");
      const current = await store.upstreams.get(input.uid);
      if (!current) throw notFound("upstream", input.uid);
      const fields = resolveUpdateMask(UPSTREAM_MASK, req.updateMask?.paths ?? [], () =>
        [
          input.name !== "" ? "name" : "",
          input.url !== "" ? "url" : "",
          input.username !== "" ? "username" : "",
          input.password !== "" ? "password" : "",
          input.tagTtl !== "" ? "tag_ttl" : "",
        ].filter(Boolean),
      );
      if (fields.includes("name") && input.name !== current.name) {
        // The name is the namespace of what the upstream cached: renaming would orphan it.
        throw invalidArgument("name", "an upstream cannot be renamed; create another one");
      }
      const next: UpstreamRow = { ...current, updateTime: ctx.clock.now() };
      if (fields.includes("url")) next.url = validateRegistryUrl(input.url, allowHttp);
      if (fields.includes("username")) next.username = input.username;
      const password = fields.includes("password") ? input.password : undefined;
      validateCredentials(next.username, password ?? "");
      if (next.username === "" && password === undefined && current.passwordSealed !== "") {
        throw invalidArgument(
          "password",
          "a password needs a username: clear the password too (update_mask password)",
        );
      }
      if (fields.includes("tag_ttl")) next.tagTtlMs = parseTagTtl(input.tagTtl);
      if (fields.includes("url")) await validateRegistryUrlAddresses(next.url, policy, resolve);
      if (password !== undefined) next.passwordSealed = await secrets.seal(password);
      const message = upstreamMessage(next);
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.upstreams.update(next), "upstream", next.uid),
        {
          resource: "upstream",
          verb: "updated",
          subject: next.uid,
          group: next.orgUid,
          schema: UpstreamSchema,
          body: message,
        },
      );
      return message;
    },

    async deleteUpstream(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.upstreams.delete(req.uid), "upstream", req.uid),
        {
          resource: "upstream",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeleteUpstreamRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },
  };

  /** NOT_FOUND unless `uid` is a group; INVALID_ARGUMENT on `parent` unless it is an organization. */
  async function requireOrganization(uid: string): Promise<void> {
    const group = await store.groups.get(uid);
    if (!group) throw notFound("group", uid);
    if (!isRoot(uid)) {
      throw invalidArgument(
        "parent",
        `parent must be an organization (a top-level group); "${group.name}" is a folder`,
      );
    }
  }
}
