import { invalidArgument } from "../core/errors.js";

const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 1e-3,
  n: 1e-6,
};
/** The longest delay a node timer takes (~24.8 days); a longer deadline is as good as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The milliseconds of a `grpc-timeout` header (1 to 8 digits and a unit: H, M, S, m, u or n):
 * undefined when there is none or it is too long for a timer to matter. A malformed value is
 * INVALID_ARGUMENT, as Connect's gRPC handler answers it.
 */
export function grpcTimeoutMs(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = typeof header === "string" ? GRPC_TIMEOUT.exec(header) : null;
  if (match === null) {
    throw invalidArgument("grpc-timeout", `"${header}" is not 1 to 8 digits and a unit (H, M, S, m, u, n)`);
  }
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
  return ms > MAX_TIMER_MS ? undefined : ms;
}
