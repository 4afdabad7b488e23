import { randomUUID } from "node:crypto";

/** A W3C Trace Context position: the trace, the parent span in it, and whether it is sampled. */
export interface TraceParent {
  /** 32 lowercase hex digits, never all zeros. */
  traceId: string;
  /** 16 lowercase hex digits, never all zeros. */
  spanId: string;
  /** The `sampled` flag (bit 0 of the trace flags). */
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * Parses a `traceparent` header (W3C Trace Context level 1): `version-traceid-parentid-flags`.
 * Returns undefined for anything invalid (a missing or repeated header, a bad shape, the
 * forbidden version `ff`, an all-zero id, or extra fields on version `00`), which the caller treats
 * as "no incoming trace" and starts a new one, as the specification says.
 */
export function parseTraceparent(header: string | readonly string[] | undefined): TraceParent | undefined {
  if (typeof header !== "string" || header.length > 512) return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The `traceparent` header value (version 00) of `parent`. */
export function formatTraceparent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${parent.sampled ? "01" : "00"}`;
}

/** A new random trace id (32 lowercase hex digits), for a request that brought none. */
export function newTraceId(): string {
  // A v4 UUID's 32 hex digits (122 random bits, never all zeros): randomUUID draws from a cached
  // entropy pool, cheaper per request than randomBytes(16).
  return randomUUID().replace(/-/g, "");
}
