import type { ServiceHandlers } from "../core/service.js";
import type { PingService } from "../gen/platform/ping/v2/ping_pb.js";

/** PingService: a connectivity check that needs no authentication. */
export function createPingService(): ServiceHandlers<typeof PingService> {
  return {
    async ping() {
      return { response: "pong" };
    },
  };
}
