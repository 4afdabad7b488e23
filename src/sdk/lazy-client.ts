import type { DescService } from "@bufbuild/protobuf";
import { Code, type Transport } from "@connectrpc/connect";
import type { WharfClient } from "./client.js";
import { createClientCore, type WharfClientOptions } from "./client-core.js";
import { WharfApiError } from "./errors.js";
import { typedErrorClient } from "./service-clients.js";
import { SERVICE_LOADERS } from "./service-loaders.js";

type Method = (...args: unknown[]) => Promise<unknown>;
type LoadedClient = Readonly<Record<string, unknown>>;

/**
 * Creates the same client as `createWharfClient`, with the same shape and types
 * (`client.registry.tags.listTags(…)`, `listAll(client.registry.tags.listTags, req)`, the registry
 * helpers), but loading each domain's service descriptors (`src/sdk/services/<domain>.ts`, a chunk
 * of its own in a bundle) only when one of its methods is first called: a browser's start-up then
 * evaluates none of them. Each method is a stable function (the same one on every read) returning
 * a promise; every failure is a WharfApiError, a domain that cannot be loaded (its chunk not
 * fetched) UNAVAILABLE, retried on the next call. Reading a service or method the SDK does not have
 * (a type error in TypeScript) answers a function that rejects with a TypeError.
 */
export function createLazyWharfClient(options: WharfClientOptions): WharfClient {
  const core = createClientCore(options);
  return { ...lazyClients(SERVICE_LOADERS, core.transport), ...core } as unknown as WharfClient;
}

/** One entry of a loader table: a service, or a domain's table of services, imported on demand. */
export interface EntryLoader {
  readonly kind: "service" | "domain";
  load(): Promise<unknown>;
}

/**
 * The lazy service clients of a loader table (SERVICE_LOADERS for createLazyWharfClient), one
 * entry per key, on `transport`. Exported for the SDK's tests, which count the loads.
 */
export function lazyClients(loaders: Readonly<Record<string, EntryLoader>>, transport: Transport) {
  const entries: Record<string, object> = {};
  for (const [key, loader] of Object.entries(loaders)) {
    const load = retriedOnFailure(key, () => loader.load());
    entries[key] =
      loader.kind === "service"
        ? lazyService(key, async () => typedErrorClient((await load()) as DescService, transport))
        : lazyDomain(key, load as () => Promise<Readonly<Record<string, DescService>>>, transport);
  }
  return entries;
}

/** A domain (`client.registry`) whose services are built from `load`'s table on first use. */
function lazyDomain(
  path: string,
  load: () => Promise<Readonly<Record<string, DescService>>>,
  transport: Transport,
): object {
  const services = new Map<string, object>();
  return members((name) => {
    let service = services.get(name);
    if (!service) {
      let client: Promise<LoadedClient> | undefined;
      service = lazyService(`${path}.${name}`, () => {
        client ??= load().then((table) => {
          const descriptor = Object.hasOwn(table, name) ? table[name] : undefined;
          if (!descriptor) throw new TypeError(`the SDK has no service ${path}.${name}`);
          return typedErrorClient(descriptor, transport);
        });
        // A failed load is not kept (the next call loads again); a missing service is a TypeError each time.
        client.catch(() => {
          client = undefined;
        });
        return client;
      });
      services.set(name, service);
    }
    return service;
  });
}

/** A service (`client.registry.tags`) whose methods wait for `client` and then call it. */
function lazyService(path: string, client: () => Promise<LoadedClient>): object {
  const methods = new Map<string, Method>();
  return members((name) => {
    let method = methods.get(name);
    if (!method) {
      method = async (...args: unknown[]) => {
        const loaded = (await client()) as Record<string, unknown>;
        const call = Object.hasOwn(loaded, name) ? loaded[name] : undefined;
        if (typeof call !== "function") throw new TypeError(`the SDK has no method ${path}.${name}`);
        return (call as Method)(...args);
      };
      methods.set(name, method);
    }
    return method;
  });
}

/**
 * An object whose every string property is `member(name)`, except the names a runtime probes
 * objects with (`then`: a promise would take it for a thenable; Object.prototype's; React's and
 * JSON's), which read as on a plain object.
 */
function members(member: (name: string) => unknown): object {
  return new Proxy(
    {},
    {
      get(target, prop, receiver) {
        if (typeof prop !== "string" || prop in Object.prototype || PROBED.has(prop)) {
          return Reflect.get(target, prop, receiver);
        }
        return member(prop);
      },
    },
  );
}

const PROBED = new Set(["then", "toJSON", "$$typeof"]);

/** `load`, shared by concurrent callers, kept once it succeeds; a failure is UNAVAILABLE and retried next time. */
function retriedOnFailure<T>(path: string, load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= load().catch((err: unknown) => {
      pending = undefined;
      throw new WharfApiError({
        code: Code.Unavailable,
        message: `the SDK's ${path} services could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
        cause: err,
      });
    });
    return pending;
  };
}

/**
 * Starts loading the service descriptors of `domains` now (a page about to call them, while its
 * own chunk loads), so its first calls do not wait for them. A module load is cached by the
 * runtime, so the lazy client's first call then finds it ready; a failure here is ignored (that
 * call loads again, and reports it).
 */
export function preloadServices(...domains: (keyof typeof SERVICE_LOADERS)[]): void {
  for (const domain of domains) SERVICE_LOADERS[domain].load().catch(() => {});
}
