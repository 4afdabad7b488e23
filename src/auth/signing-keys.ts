import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from "jose";
import type { Clock } from "../core/clock.js";
import { internal } from "../core/errors.js";
import type { SigningKeyRow, SigningKeyStore } from "../storage/store.js";

/** The only algorithm Wharf's issuer signs with and its verifier accepts. */
export const SIGNING_ALG = "ES256";

/** A private key ready to sign with. */
export interface ActiveSigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/** A published verification key (JWK with `kid`, `alg` ES256 and `use` sig). */
export type PublicSigningJwk = JWK & { kid: string };

/**
 * The issuer's ES256 keys, kept in the shared store so every process signs and verifies with the
 * same set. Loaded rows are cached for `cacheTtlMs` and then reloaded, so keys added (rotation) or
 * retired by another process are picked up.
 */
export interface SigningKeyRing {
  /**
   * The key to sign with, creating the first key when the store has no usable one (race-safe: see
   * `createSigningKeyRing`). Among non-retired keys: the newest one published at least
   * `activationDelayMs` ago, else the oldest (ties broken by kid, so every process agrees).
   */
  current(): Promise<ActiveSigningKey>;
  /** Every stored key's public JWK (retired keys included, they still verify), newest first. */
  publicJwks(): Promise<PublicSigningJwk[]>;
  /**
   * The public key with `kid`, or undefined. On a miss the store is re-read, so a key added by
   * another process is found; a kid still missing after that is answered from memory for
   * `minReloadIntervalMs` (so a flood of made-up kids cannot turn into a flood of queries).
   */
  verificationKey(kid: string): Promise<CryptoKey | undefined>;
  /**
   * Generates and stores a new key; it is published at once and signs once `activationDelayMs` has
   * passed, so verifiers that cache the JWKS see it before any token uses it. Returns its kid.
   */
  rotate(): Promise<string>;
}

interface Loaded {
  rows: SigningKeyRow[];
  publicJwks: Map<string, PublicSigningJwk>;
  at: number;
}

/**
 * Creates a key ring over `signingKeys`. First-key creation is race-safe across processes: each
 * process that finds no usable key inserts one, then re-reads the store and signs with the key the
 * selection rule picks from what it finds; all stored keys are published, so tokens signed by
 * either verify everywhere and the processes converge on one signer.
 */
export function createSigningKeyRing(opts: {
  signingKeys: SigningKeyStore;
  clock: Clock;
  /** How long loaded keys are trusted before re-reading the store. Default 60 s. */
  cacheTtlMs?: number;
  /** How long a new key is only published before it signs. Default 10 min (> JWKS max-age). */
  activationDelayMs?: number;
  /** How long a kid not found in the store is not looked up again. Default 1 s. */
  minReloadIntervalMs?: number;
}): SigningKeyRing {
  const { signingKeys, clock } = opts;
  const cacheTtlMs = opts.cacheTtlMs ?? 60_000;
  const activationDelayMs = opts.activationDelayMs ?? 10 * 60_000;
  const minReloadIntervalMs = opts.minReloadIntervalMs ?? 1000;
  let loaded: Loaded | undefined;
  let reloading: Promise<Loaded> | undefined;
  let creating: Promise<void> | undefined;
  const privateKeys = new Map<string, Promise<CryptoKey>>();
  const publicKeys = new Map<string, Promise<CryptoKey>>();
  const unknownKids = new Map<string, number>();

  function reload(): Promise<Loaded> {
    reloading ??= (async () => {
      const at = clock.now();
      const rows = await signingKeys.list();
      const publicJwks = new Map<string, PublicSigningJwk>();
      for (const row of rows) {
        const jwk = JSON.parse(row.publicJwk) as JWK;
        publicJwks.set(row.kid, { ...jwk, kid: row.kid, alg: SIGNING_ALG, use: "sig" });
      }
      loaded = { rows, publicJwks, at };
      return loaded;
    })().finally(() => {
      reloading = undefined;
    });
    return reloading;
  }

  /** A load that started after this call (an in-flight one may predate a write we must see). */
  async function reloadFromNow(): Promise<Loaded> {
    if (reloading) await reloading.catch(() => undefined);
    return reload();
  }

  async function fresh(): Promise<Loaded> {
    if (loaded && clock.now() - loaded.at < cacheTtlMs) return loaded;
    return reload();
  }

  function pickSigner(rows: readonly SigningKeyRow[], now: number): SigningKeyRow | undefined {
    const active = rows.filter((r) => r.retireTime === undefined || r.retireTime > now);
    const byAge = (a: SigningKeyRow, b: SigningKeyRow) =>
      a.createTime - b.createTime || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0);
    const sorted = [...active].sort(byAge);
    const published = sorted.filter((r) => r.createTime <= now - activationDelayMs);
    return published.at(-1) ?? sorted[0];
  }

  async function insertNewKey(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = await exportJWK(privateKey);
    await signingKeys.insert({
      kid,
      privateJwk: JSON.stringify(privateJwk),
      publicJwk: JSON.stringify(publicJwk),
      createTime: clock.now(),
    });
    return kid;
  }

  /** Imports a JWK once per kid; a failed import is not remembered. */
  function imported(cache: Map<string, Promise<CryptoKey>>, kid: string, jwk: () => JWK): Promise<CryptoKey> {
    let key = cache.get(kid);
    if (!key) {
      const pending = (async () => (await importJWK(jwk(), SIGNING_ALG)) as CryptoKey)();
      pending.catch(() => cache.delete(kid));
      cache.set(kid, pending);
      key = pending;
    }
    return key;
  }

  return {
    async current() {
      let signer = pickSigner((await fresh()).rows, clock.now());
      if (!signer) {
        creating ??= insertNewKey()
          .then(() => undefined)
          .finally(() => {
            creating = undefined;
          });
        await creating;
        signer = pickSigner((await reloadFromNow()).rows, clock.now());
        if (!signer) throw internal("no signing key could be created");
      }
      const row = signer;
      const privateKey = await imported(privateKeys, row.kid, () => JSON.parse(row.privateJwk) as JWK);
      return { kid: row.kid, privateKey };
    },

    async publicJwks() {
      const { rows, publicJwks } = await fresh();
      return [...rows]
        .sort((a, b) => b.createTime - a.createTime)
        .map((r) => publicJwks.get(r.kid))
        .filter((j): j is PublicSigningJwk => j !== undefined);
    },

    async verificationKey(kid) {
      let state = await fresh();
      if (!state.publicJwks.has(kid)) {
        const now = clock.now();
        if ((unknownKids.get(kid) ?? 0) > now) return undefined;
        state = await reloadFromNow();
        if (!state.publicJwks.has(kid)) {
          if (unknownKids.size >= 1000) unknownKids.clear();
          unknownKids.set(kid, now + minReloadIntervalMs);
          return undefined;
        }
      }
      const jwk = state.publicJwks.get(kid);
      return jwk ? imported(publicKeys, kid, () => jwk) : undefined;
    },

    async rotate() {
      const kid = await insertNewKey();
      await reloadFromNow();
      return kid;
    },
  };
}
