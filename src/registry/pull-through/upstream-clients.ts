import type { RemoteRegistry } from "../remote/remote-registry.js";
import type { UpstreamConfig } from "../upstreams/upstream-directory.js";

/**
 * The RemoteRegistry client of each upstream, kept by uid and `updateTime`: an updated upstream
 * (new URL, credentials) gets a new client and the old one is closed. `close` closes them all.
 */
export interface UpstreamClients {
  clientFor(upstream: UpstreamConfig): RemoteRegistry;
  close(): Promise<void>;
}

/** Creates the client cache over `make`, which builds a client for an upstream's URL and credentials. */
export function createUpstreamClients(make: (upstream: UpstreamConfig) => RemoteRegistry): UpstreamClients {
  const clients = new Map<string, { updateTime: number; client: RemoteRegistry }>();
  const closeQuietly = (client: RemoteRegistry) => void client.close().catch(() => {});
  return {
    clientFor(upstream) {
      const kept = clients.get(upstream.uid);
      if (kept && kept.updateTime === upstream.updateTime) return kept.client;
      if (kept) closeQuietly(kept.client);
      const client = make(upstream);
      clients.set(upstream.uid, { updateTime: upstream.updateTime, client });
      return client;
    },
    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.allSettled(all.map((c) => c.client.close()));
    },
  };
}
