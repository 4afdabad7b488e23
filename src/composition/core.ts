import { randomBytes } from "node:crypto";
import { type AccessResolver, createAccessResolver } from "../authz/access.js";
import { ensureAdminIdentity } from "../authz/admin-identity.js";
import { seedBuiltInRoles } from "../authz/built-in-roles.js";
import type { WharfConfig } from "../config/config.js";
import { storageLocationsOf } from "../config/storage-locations.js";
import type { Clock } from "../core/clock.js";
import { PageTokenCodec } from "../core/list.js";
import { createSignedLinks, type SignedLinks } from "../core/signed-links.js";
import { resolveSessionGrants, sessionGrantUids } from "../login/session-grants.js";
import { writeBlobProbe } from "../observability/readiness.js";
import { bindBlobStore } from "../storage/blob-store-identity.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";

/** The settings key of the page-token secret; readiness reads it as its database query. */
export const PAGE_TOKEN_SECRET_KEY = "page_token_secret";

/** What both faces share on top of the store: list page tokens, signed links and per-request access. */
export interface Core {
  pageTokens: PageTokenCodec;
  /** Expiring links fetched without an API token (large raw reports), keyed by the same secret. */
  links: SignedLinks;
  access: AccessResolver;
}

/**
 * Readies the opened store and blob store for serving, in this order: refuses a blob store that
 * belongs to another database (`BlobStoreMismatchError`, see `bindBlobStore`) before anything
 * touches blobs; proves blob storage takes writes (and leaves the object readiness looks for);
 * seeds the built-in roles and the administrator identity; keeps the page-token secret (the first
 * server to start writes it), which also keys the signed links. Then builds the access resolver (session grants from the login
 * flow's claims). Binds no port and starts nothing that needs stopping.
 */
export async function buildCore(deps: {
  /** The storage locations `bindBlobStore` records and compares. */
  config: WharfConfig;
  store: Store;
  blobs: BlobDriver;
  clock: Clock;
}): Promise<Core> {
  const { store, blobs, clock } = deps;
  await bindBlobStore(store, blobs, storageLocationsOf(deps.config));
  await writeBlobProbe(blobs);
  const now = clock.now();
  await seedBuiltInRoles(store, now);
  await ensureAdminIdentity(store, now);
  const secret = await store.settings.putIfAbsent(
    PAGE_TOKEN_SECRET_KEY,
    randomBytes(32).toString("base64url"),
  );
  const pageTokens = new PageTokenCodec(Buffer.from(secret, "base64url"), clock);
  const links = createSignedLinks(Buffer.from(secret, "base64url"), clock);
  const access = createAccessResolver({
    store,
    clock,
    ...(deps.config.cacheTtlMs === undefined ? {} : { ttlMs: deps.config.cacheTtlMs }),
    session: {
      key: (claims) => sessionGrantUids(claims).join(" "),
      grants: (key) => resolveSessionGrants(store, key.split(" ")),
    },
  });
  return { pageTokens, links, access };
}
