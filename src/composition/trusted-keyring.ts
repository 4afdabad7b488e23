import type { Clock } from "../core/clock.js";
import { createTrustedKeyring } from "../registry/supply-chain/keys/trusted-keyring.js";
import type { TrustedKeyring } from "../registry/supply-chain/supply-chain.js";
import type { Store } from "../storage/store.js";

/**
 * Builds the trusted keyring (the keys at a repo and its ancestors, ADR 0056) over the store,
 * following its change feed so a key added or deleted by any process shows at the next read; it
 * stops following the feed through `onClose`. The signature verifier takes it.
 */
export function buildTrustedKeyring(deps: {
  store: Store;
  clock: Clock;
  onClose: (close: () => Promise<void>) => void;
}): TrustedKeyring {
  const keyring = createTrustedKeyring({ store: deps.store, changes: deps.store.changes, clock: deps.clock });
  deps.onClose(async () => keyring.close());
  return keyring;
}
