import { randomBytes } from "node:crypto";
import { createServiceBindings } from "./api/bindings.js";
import { createIssuer } from "./auth/issuer.js";
import { createTokenVerifier } from "./auth/token-verifier.js";
import { createWellKnownRoutes } from "./auth/well-known.js";
import { createAccessResolver } from "./authz/access.js";
import { ensureAdminIdentity } from "./authz/admin-identity.js";
import { seedBuiltInRoles } from "./authz/built-in-roles.js";
import { publicUrlOf, type WharfConfig } from "./config/config.js";
import { openConfiguredStore } from "./config/open-configured-store.js";
import { type Clock, systemClock } from "./core/clock.js";
import { PageTokenCodec } from "./core/list.js";
import { startRegistryPlaceholder } from "./oci/registry-placeholder.js";
import type { Store } from "./storage/store.js";
import { createApiHandler, startApiServer } from "./transport/create-api-handler.js";

/** A running Wharf: where it listens, and how to stop it. */
export interface RunningServer {
  apiUrl: string;
  registryUrl: string;
  store: Store;
  close(): Promise<void>;
}

/** Options for tests and embedding; the CLI uses the defaults. */
export interface ServerOptions {
  clock?: Clock;
  /** Receives one structured line per request; default: JSON on stdout. */
  logger?: (line: object) => void;
}

const PAGE_TOKEN_SECRET_KEY = "page_token_secret";

/**
 * The composition root: opens the store (applying migrations), seeds built-in roles and the
 * administrator identity, builds issuer, verifier, authorization and services, and starts the API
 * listener and the registry listener. `close()` stops both and closes the store.
 */
export async function startServer(config: WharfConfig, options: ServerOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? ((line: object) => process.stdout.write(`${JSON.stringify(line)}\n`));
  const store = await openConfiguredStore(config);
  try {
    const now = clock.now();
    await seedBuiltInRoles(store, now);
    await ensureAdminIdentity(store, now);
    const secret = await store.settings.putIfAbsent(
      PAGE_TOKEN_SECRET_KEY,
      randomBytes(32).toString("base64url"),
    );
    const pageTokens = new PageTokenCodec(Buffer.from(secret, "base64url"), clock);
    const access = createAccessResolver({ store, clock });

    // The issuer URL is the API's public URL, which may only be known once the port is bound.
    const api = await startApiServer({
      host: config.apiAddr.host,
      port: config.apiAddr.port,
      handler: (req, res) => handler(req, res),
    });
    const apiUrl = publicUrlOf(config.publicUrl, api.address);
    const issuer = createIssuer({ store, issuerUrl: apiUrl, clock });
    const verifier = createTokenVerifier({ issuer, audience: apiUrl, clock });
    const bindings = createServiceBindings({
      store,
      pageTokens,
      bindingsChanged: (identityUid?: string) => access.invalidate(identityUid),
    });
    const handler = createApiHandler({
      bindings,
      authenticator: verifier,
      accessFor: (principal) => access.accessFor(principal),
      clock,
      logger,
      extraRoutes: createWellKnownRoutes(issuer),
    });
    const registry = await startRegistryPlaceholder(config.registryAddr);
    return {
      apiUrl,
      registryUrl: publicUrlOf(config.registryUrl, registry.address),
      store,
      async close() {
        await Promise.allSettled([api.close(), registry.close()]);
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
