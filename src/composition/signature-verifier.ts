import { readFile } from "node:fs/promises";
import type { WharfConfig } from "../config/config.js";
import type { Clock } from "../core/clock.js";
import type { EventRecorder } from "../events/event-recorder.js";
import { createRegistryContent } from "../registry/data-plane/registry-content.js";
import { createSignatureVerifier } from "../registry/supply-chain/signatures/signature-verifier.js";
import {
  parseTrustedRoot,
  type SigstoreTrustedRoot,
} from "../registry/supply-chain/signatures/sigstore-bundle.js";
import type { SignatureVerifier, TrustedKeyring } from "../registry/supply-chain/supply-chain.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";

/**
 * Builds the signature verifier (ADR 0057) over the registry's content and the trusted keyring,
 * its cache following the store's change feed until `onClose`; with `--sigstore-trusted-root`, the
 * file is read and parsed now (a bad file fails start-up, naming the flag). SignaturesService, the
 * tags' verified signers and the pull-policy evaluator share it.
 */
export async function buildSignatureVerifier(deps: {
  config: Pick<WharfConfig, "sigstoreTrustedRoot">;
  store: Store;
  blobs: BlobDriver;
  clock: Clock;
  events: EventRecorder;
  keyring: TrustedKeyring;
  onClose: (close: () => Promise<void>) => void;
}): Promise<SignatureVerifier> {
  const { store, blobs, clock, events } = deps;
  const verifier = createSignatureVerifier({
    content: createRegistryContent({ store, blobs, clock, events }),
    keyring: deps.keyring,
    changes: store.changes,
    clock,
    trustedRoot: await trustedRootOf(deps.config.sigstoreTrustedRoot),
  });
  deps.onClose(async () => verifier.close());
  return verifier;
}

async function trustedRootOf(file: string): Promise<SigstoreTrustedRoot | undefined> {
  if (file === "") return undefined;
  try {
    return parseTrustedRoot(await readFile(file, "utf8"));
  } catch (err) {
    throw new Error(`--sigstore-trusted-root ${file}: ${(err as Error).message}`);
  }
}
