import type { Clock } from "../../core/clock.js";
import type { UpstreamConfig } from "../upstreams/upstream-directory.js";

/**
 * Logs that an upstream failed while its cached copy was served: at most one warning per upstream
 * per `tagTtl` (a pull storm against a dead upstream is one line, not one per request).
 */
export interface UpstreamWarnings {
  /** Logs `message` unless this upstream was warned about less than its tagTtl ago; true when logged. */
  warn(upstream: UpstreamConfig, message: string): boolean;
}

/** Creates the warning limiter over `logger` (a structured line writer). */
export function createUpstreamWarnings(clock: Clock, logger: (line: object) => void): UpstreamWarnings {
  const last = new Map<string, number>();
  return {
    warn(upstream, message) {
      const now = clock.now();
      const at = last.get(upstream.uid);
      if (at !== undefined && now - at < upstream.tagTtlMs) return false;
      last.set(upstream.uid, now);
      logger({
        time: new Date(now).toISOString(),
        level: "warn",
        msg: "upstream failed: serving the cached copy",
        upstream: `${upstream.orgName}/${upstream.name}`,
        url: upstream.url,
        error: message,
      });
      return true;
    },
  };
}
