import type { Clock } from "../core/clock.js";
import { type SecretBox, secretBoxOf } from "../core/secret-box.js";
import { createUpstreamDirectory, type UpstreamDirectory } from "../registry/upstreams/upstream-directory.js";
import type { Store } from "../storage/store.js";

/** The upstreams wing: the deployment's secret box and the directory the registry consults. */
export interface Upstreams {
  /** Seals and opens stored secrets (upstream and replication passwords; ADR 0051). */
  secrets: SecretBox;
  /** Which repository names are an upstream's namespace (pushes refused, pulls served by the cache). */
  directory: UpstreamDirectory;
}

/**
 * Builds the secret box over the store's settings (the key is created on first use) and the
 * upstream directory following the store's change feed; the directory stops following it through
 * `onClose`.
 */
export function buildUpstreams(deps: {
  store: Store;
  clock: Clock;
  onClose: (close: () => Promise<void>) => void;
}): Upstreams {
  const secrets = secretBoxOf(deps.store.settings);
  const directory = createUpstreamDirectory({ store: deps.store, secrets, clock: deps.clock });
  deps.onClose(async () => directory.close());
  return { secrets, directory };
}
