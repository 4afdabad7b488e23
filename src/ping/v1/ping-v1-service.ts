import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import type { PingService as PingServiceV1 } from "../../gen/platform/ping/v1/ping_pb.js";
import { PingRequestSchema, type PingService } from "../../gen/platform/ping/v2/ping_pb.js";

/** PingService (v1): answers what the v2 Ping answers (`{"response": "pong"}`), without authentication. */
export function createPingV1Service(
  v2: ServiceHandlers<typeof PingService>,
): ServiceHandlers<typeof PingServiceV1> {
  return {
    async ping(_req, ctx) {
      const answer = await v2.ping(create(PingRequestSchema), ctx);
      return { response: answer.response ?? "" };
    },
  };
}
