import { Code } from "@connectrpc/connect";
import type { VulnReport } from "../../gen/platform/registry/v1/registry_pb.js";
import { WharfApiError } from "../../sdk/errors.js";
import type { CommandContext } from "./context.js";

/**
 * The current vulnerability report of `digest` in the repository `repoUid`, or undefined when the
 * image has none (NOT_FOUND) or the caller may not read reports (PERMISSION_DENIED): for commands
 * where a report only adds to what they show (`images history`, `images diff`). Other failures
 * are thrown. Needs `registryV1.registry` among the command's services.
 */
export async function optionalReport(
  ctx: CommandContext,
  repoUid: string,
  digest: string,
): Promise<VulnReport | undefined> {
  try {
    return await ctx.client.registryV1.registry.getVulnReport({ repoUid, digest });
  } catch (err) {
    if (err instanceof WharfApiError && (err.code === Code.NotFound || err.code === Code.PermissionDenied))
      return undefined;
    throw err;
  }
}
