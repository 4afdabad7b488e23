import { pageRequestOf, toUidpFilter } from "../../../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../../../core/errors.js";
import type { ListSpec, PageTokenCodec } from "../../../core/list.js";
import { paginate } from "../../../core/list.js";
import { pageEnvelope } from "../../../core/list-specs.js";
import { validateGroupName } from "../../../core/registry-name.js";
import type { ServiceHandlers } from "../../../core/service.js";
import { newChildUid, parentOf, requireUidp } from "../../../core/uidp.js";
import type { EventRecorder } from "../../../events/event-recorder.js";
import { recordedMutation } from "../../../events/recorded-mutation.js";
import { Capability } from "../../../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteSigningKeyRequestSchema,
  SigningKeySchema,
  type SigningKeysService,
} from "../../../gen/platform/registry/v2/signing_keys_pb.js";
import type { Store } from "../../../storage/store.js";
import type { TrustedKeyRow } from "../../../storage/trusted-key-store.js";
import { requireGroupOrRepo } from "../../resource-parent.js";
import { validatePublicKeyPem } from "./public-key-pem.js";
import { signingKeyMessage } from "./signing-key-mapping.js";

/** What SigningKeysService is built from (the composition root provides it). */
export interface SigningKeysServiceDeps {
  /** Keys, the groups and repos they are under, and `transaction` (its `tx` is the whole Store). */
  store: Pick<Store, "groups" | "repos" | "trustedKeys" | "transaction">;
  pageTokens: PageTokenCodec;
  /** Writes events into the outbox, in the transaction of the change they report. */
  events: EventRecorder;
}

/** Keys are never updated: by uid (default), name or create time. */
const KEY_LIST: ListSpec<TrustedKeyRow> = {
  allowedOrder: ["uid", "name", "create_time"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (row, field) =>
    field === "name" ? row.name : field === "create_time" ? row.createTime : row.uid,
  uidOf: (row) => row.uid,
};

/**
 * SigningKeysService (ADR 0056): public keys an organization, folder or repo trusts to sign
 * images. A create checks the name (the group-name rule, unique within the parent: ALREADY_EXISTS)
 * and the key (validatePublicKeyPem: INVALID_ARGUMENT on `publicKeyPem`), and stores it normalised
 * with its algorithm and fingerprint. Keys are never updated. Each change is a
 * `signing_key.<verb>` event of the parent, recorded in the write's transaction.
 */
export function createSigningKeysService(
  deps: SigningKeysServiceDeps,
): ServiceHandlers<typeof SigningKeysService> {
  const { store } = deps;
  return {
    async listSigningKeys(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_SIGNING_KEYS_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp) };
      const page = await paginate(pageRequestOf(req), filter, KEY_LIST, deps.pageTokens, (window) =>
        store.trustedKeys.list({ ...filter, within }, window),
      );
      return { signingKeys: page.items.map(signingKeyMessage), ...pageEnvelope(page) };
    },

    async getSigningKey(req) {
      const row = await store.trustedKeys.get(req.uid);
      if (!row) throw notFound("signing key", req.uid);
      return signingKeyMessage(row);
    },

    async createSigningKey(req, ctx) {
      requireUidp("parent", req.parent);
      const input = req.signingKey;
      if (!input) throw invalidArgument("signing_key", "signing_key is required");
      validateGroupName(input.name, "name");
      const key = validatePublicKeyPem(input.publicKeyPem);
      const row: TrustedKeyRow = {
        uid: newChildUid(req.parent),
        parentUid: req.parent,
        name: input.name,
        publicKeyPem: key.pem,
        algorithm: key.algorithm,
        fingerprint: key.fingerprint,
        createTime: ctx.clock.now(),
      };
      const message = signingKeyMessage(row);
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          await requireGroupOrRepo(tx, req.parent);
          await tx.trustedKeys.insert(row);
        },
        {
          resource: "signingKey",
          verb: "created",
          subject: row.uid,
          group: row.parentUid,
          schema: SigningKeySchema,
          body: message,
        },
      );
      return message;
    },

    async deleteSigningKey(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.trustedKeys.delete(req.uid), "signing key", req.uid),
        {
          resource: "signingKey",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeleteSigningKeyRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },
  };
}
