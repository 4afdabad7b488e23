import type { Clock } from "../core/clock.js";
import { invalidArgument } from "../core/errors.js";
import type { TokenRevocationRow, TokenRevocationStore } from "../storage/auth-store.js";

/** Answers whether a token (or refresh token) has been withdrawn; cheap enough for every request. */
export interface RevocationChecker {
  /** True when a revocation matches `subject` (or every subject) with a cutoff after `issuedAtMs`. */
  isRevoked(subject: string, issuedAtMs: number): boolean;
}

/** The revocations of a shared store, kept in memory and re-read when the table changes. */
export interface RevocationWatch extends RevocationChecker {
  /** Reads the table now (when it changed since the last read); resolves once done. */
  refresh(): Promise<void>;
  /**
   * Like `refresh`, but the read starts after this call (a poll in flight may predate a change
   * just committed elsewhere): call it when the change feed reports a revocation.
   */
  refreshFromNow(): Promise<void>;
  /** Stops polling; resolves once a poll in flight is done (it issues no query after that). */
  close(): Promise<void>;
}

/**
 * How often a watch polls by default. Revocations reach a serving process through the store's
 * change feed within milliseconds; the poll is the safety net when a notification is lost.
 */
export const REVOCATION_POLL_INTERVAL_MS = 1000;

/**
 * Watches `revocations`: every `pollIntervalMs` one cheap query (`version`: row count and highest
 * id) and, only when that changed, a read of the live rows. `isRevoked` is two map lookups: the
 * latest cutoff for every subject and the latest for the subject asked about. Call `refresh` once
 * before serving. A failed poll keeps the previous state and reports to `onError`.
 */
export function watchTokenRevocations(opts: {
  revocations: TokenRevocationStore;
  clock: Clock;
  pollIntervalMs?: number;
  onError?: (err: unknown) => void;
}): RevocationWatch {
  const { revocations, clock } = opts;
  let everySubjectBefore = Number.NEGATIVE_INFINITY;
  let bySubject = new Map<string, number>();
  let seenVersion: string | undefined;
  let polling: Promise<void> | undefined;

  function index(rows: readonly TokenRevocationRow[]): void {
    let every = Number.NEGATIVE_INFINITY;
    const subjects = new Map<string, number>();
    for (const row of rows) {
      if (row.subject === undefined) every = Math.max(every, row.issuedBefore);
      else
        subjects.set(row.subject, Math.max(subjects.get(row.subject) ?? row.issuedBefore, row.issuedBefore));
    }
    everySubjectBefore = every;
    bySubject = subjects;
  }

  async function poll(): Promise<void> {
    const version = await revocations.version();
    if (version === seenVersion) return;
    index(await revocations.listLive(clock.now()));
    seenVersion = version;
  }

  function refresh(): Promise<void> {
    polling ??= poll().finally(() => {
      polling = undefined;
    });
    return polling;
  }

  async function refreshFromNow(): Promise<void> {
    if (polling) await polling.catch(() => {});
    return refresh();
  }

  const timer = setInterval(() => {
    refresh().catch((err: unknown) => opts.onError?.(err));
  }, opts.pollIntervalMs ?? REVOCATION_POLL_INTERVAL_MS);
  timer.unref();

  return {
    isRevoked(subject, issuedAtMs) {
      const cutoff = Math.max(everySubjectBefore, bySubject.get(subject) ?? Number.NEGATIVE_INFINITY);
      return issuedAtMs < cutoff;
    },
    refresh,
    refreshFromNow,
    async close() {
      clearInterval(timer);
      // A poll reads twice (version, then the rows): let it finish before the store closes. Its
      // failure is reported by whoever started it.
      await polling?.catch(() => {});
    },
  };
}

/** What `wharf admin tokens revoke` asks for: a subject, a cutoff time, or both. */
export interface RevocationRequest {
  /** Only this subject's tokens; undefined = every subject (then `issuedBefore` is required). */
  subject?: string;
  /** Tokens issued before this (ms); default: every token issued up to the end of the current second. */
  issuedBefore?: number;
}

/**
 * Stores a revocation and returns it. Tokens carry `iat` in whole seconds, so the default cutoff is
 * the start of the next second: a token issued in the same second as the revocation is revoked
 * too, and one issued from the next second on is not. The row is kept `acceptedForMs` past its
 * cutoff (the longest anything it matches, refresh tokens included, can still be presented);
 * expired rows are pruned on the way. INVALID_ARGUMENT for no subject and no cutoff, an empty
 * subject, or a cutoff in the future (it would revoke tokens not issued yet).
 */
export async function revokeTokens(
  revocations: TokenRevocationStore,
  request: RevocationRequest,
  opts: { now: number; acceptedForMs: number },
): Promise<TokenRevocationRow> {
  const { now } = opts;
  if (request.subject === undefined && request.issuedBefore === undefined) {
    throw invalidArgument("subject", "give a subject, a time tokens were issued before, or both");
  }
  if (request.subject !== undefined && request.subject.trim() === "") {
    throw invalidArgument("subject", "must not be empty");
  }
  const endOfSecond = Math.floor(now / 1000) * 1000 + 1000;
  if (request.issuedBefore !== undefined && request.issuedBefore > endOfSecond) {
    throw invalidArgument("issued_before", "must not be in the future");
  }
  const issuedBefore = request.issuedBefore ?? endOfSecond;
  await revocations.prune(now);
  const row: Omit<TokenRevocationRow, "id"> = {
    issuedBefore,
    createTime: now,
    expireTime: issuedBefore + opts.acceptedForMs,
  };
  if (request.subject !== undefined) row.subject = request.subject;
  return revocations.insert(row);
}
