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
import type { SigningKeyRow, SigningKeyStore } from "../storage/auth-store.js";
import { TOKEN_ACCEPTANCE_HORIZON_MS } from "./token-limits.js";

/** The only algorithm Wharf's issuer signs with and its verifier accepts. */
export const SIGNING_ALG = "ES256";

/** A private key ready to sign with. */
export interface ActiveSigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/** A published verification key (JWK with `kid`, `alg` ES256 and `use` sig). */
export type PublicSigningJwk = JWK & { kid: string };

/** Where a key is in its life: signing, only verifying (until its retire time), or gone. */
export type SigningKeyState = "current" | "retiring" | "retired";

/** One key as `wharf admin keys list` shows it. */
export interface SigningKeyStatus {
  kid: string;
  createTime: number;
  /** When it stops verifying; undefined while nothing replaced it. */
  retireTime?: number;
  state: SigningKeyState;
}

/**
 * The issuer's ES256 keys, kept in the shared store so every process signs and verifies with the
 * same set. Loaded rows are cached for `cacheTtlMs` (default 2 s) and then reloaded, so a key
 * rotated in by another process signs here, and is published here, within seconds.
 *
 * Life of a key: it signs from its creation until a newer key exists (`rotate`), which sets its
 * retire time to the rotation time plus `retireAfterMs` (default TOKEN_ACCEPTANCE_HORIZON_MS: the
 * longest any token it signed can still be accepted). Until then it is published and verifies;
 * from then on it does neither.
 */
export interface SigningKeyRing {
  /**
   * The key to sign with: the newest key (createTime, then kid, so every process agrees) not yet
   * retired. Creates the first key when there is none (race-safe: see `createSigningKeyRing`).
   */
  current(): Promise<ActiveSigningKey>;
  /** The public JWK of every key not yet retired, newest first. */
  publicJwks(): Promise<PublicSigningJwk[]>;
  /**
   * The public key with `kid` if it is not retired, else undefined. On a miss the store is re-read,
   * so a key added by another process is found; a kid still missing after that is answered from
   * memory for `minReloadIntervalMs` (so a flood of made-up kids cannot turn into a flood of queries).
   */
  verificationKey(kid: string): Promise<CryptoKey | undefined>;
  /**
   * Generates and stores a new key, which signs at once (here, and in other processes once they
   * reload), and sets the retire time of the keys it replaces. Returns its kid.
   */
  rotate(): Promise<string>;
  /** Every stored key with its state, newest first, read from the store now. */
  describe(): Promise<SigningKeyStatus[]>;
  /**
   * Drops the loaded keys (another process added or retired one): the next use re-reads the store,
   * and a load in flight now is not trusted past that use.
   */
  forget(): void;
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
  /** How long loaded keys are trusted before re-reading the store. Default 2 s. */
  cacheTtlMs?: number;
  /** How long a replaced key keeps verifying. Default TOKEN_ACCEPTANCE_HORIZON_MS. */
  retireAfterMs?: number;
  /** How long a kid not found in the store is not looked up again. Default 1 s. */
  minReloadIntervalMs?: number;
}): SigningKeyRing {
  const { signingKeys, clock } = opts;
  const cacheTtlMs = opts.cacheTtlMs ?? 2000;
  const retireAfterMs = opts.retireAfterMs ?? TOKEN_ACCEPTANCE_HORIZON_MS;
  const minReloadIntervalMs = opts.minReloadIntervalMs ?? 1000;
  let loaded: Loaded | undefined;
  let reloading: Promise<Loaded> | undefined;
  let creating: Promise<void> | undefined;
  const privateKeys = new Map<string, Promise<CryptoKey>>();
  const publicKeys = new Map<string, Promise<CryptoKey>>();
  const unknownKids = new Map<string, number>();
  let forgets = 0;

  function reload(): Promise<Loaded> {
    reloading ??= (async () => {
      const forgetsBefore = forgets;
      const at = clock.now();
      const rows = await signingKeys.list();
      const publicJwks = new Map<string, PublicSigningJwk>();
      for (const row of rows) {
        const jwk = JSON.parse(row.publicJwk) as JWK;
        publicJwks.set(row.kid, { ...jwk, kid: row.kid, alg: SIGNING_ALG, use: "sig" });
      }
      // Forgotten meanwhile: these rows may predate the change, so the next use reloads.
      loaded = { rows, publicJwks, at: forgets === forgetsBefore ? at : Number.NEGATIVE_INFINITY };
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

  const isLive = (row: SigningKeyRow, now: number) => row.retireTime === undefined || row.retireTime > now;
  const newestFirst = (a: SigningKeyRow, b: SigningKeyRow) =>
    b.createTime - a.createTime || (a.kid < b.kid ? 1 : a.kid > b.kid ? -1 : 0);

  function pickSigner(rows: readonly SigningKeyRow[], now: number): SigningKeyRow | undefined {
    return rows.filter((r) => isLive(r, now)).sort(newestFirst)[0];
  }

  async function insertNewKey(): Promise<{ kid: string; createTime: number }> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = await exportJWK(privateKey);
    const createTime = clock.now();
    await signingKeys.insert({
      kid,
      privateJwk: JSON.stringify(privateJwk),
      publicJwk: JSON.stringify(publicJwk),
      createTime,
    });
    return { kid, createTime };
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
      const now = clock.now();
      return rows
        .filter((r) => isLive(r, now))
        .sort(newestFirst)
        .map((r) => publicJwks.get(r.kid))
        .filter((j): j is PublicSigningJwk => j !== undefined);
    },

    async verificationKey(kid) {
      let state = await fresh();
      const now = clock.now();
      if (!state.publicJwks.has(kid)) {
        if ((unknownKids.get(kid) ?? 0) > now) return undefined;
        state = await reloadFromNow();
        if (!state.publicJwks.has(kid)) {
          if (unknownKids.size >= 1000) unknownKids.clear();
          unknownKids.set(kid, now + minReloadIntervalMs);
          return undefined;
        }
      }
      const row = state.rows.find((r) => r.kid === kid);
      const jwk = state.publicJwks.get(kid);
      if (!row || !jwk || !isLive(row, now)) return undefined;
      return imported(publicKeys, kid, () => jwk);
    },

    async rotate() {
      const { kid, createTime } = await insertNewKey();
      // Retire what is older than the newest key stored now: a concurrent rotation may have stored
      // a newer key than ours (then ours retires too), and one that finished first did not see ours.
      const newest = pickSigner((await reloadFromNow()).rows, clock.now()) ?? { kid, createTime };
      await signingKeys.retireOthers(newest.kid, newest.createTime, createTime + retireAfterMs);
      await reloadFromNow();
      return kid;
    },

    async describe() {
      const { rows } = await reloadFromNow();
      const now = clock.now();
      const signer = pickSigner(rows, now);
      return [...rows].sort(newestFirst).map((r) => {
        const state: SigningKeyState =
          r.kid === signer?.kid ? "current" : isLive(r, now) ? "retiring" : "retired";
        const status: SigningKeyStatus = { kid: r.kid, createTime: r.createTime, state };
        if (r.retireTime !== undefined) status.retireTime = r.retireTime;
        return status;
      });
    },

    forget() {
      forgets++;
      loaded = undefined;
      unknownKids.clear();
    },
  };
}
