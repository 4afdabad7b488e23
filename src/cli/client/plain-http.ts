import { errorOfResponse } from "../../sdk/errors.js";
import type { CommandContext } from "./context.js";

/**
 * Calls a plain HTTP route of the API (`/auth/v1/…`) with the caller's token, and `body` as JSON
 * when given, and answers its JSON; a failed answer rejects with the SDK's WharfApiError decoded
 * from its google.rpc.Status body.
 */
export async function callPlainRoute(
  ctx: CommandContext,
  url: URL,
  method = "GET",
  body?: Record<string, unknown>,
): Promise<unknown> {
  const token = await ctx.tokenSource.token();
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await ctx.fetch(url, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw await errorOfResponse(response);
  return (await response.json()) as unknown;
}
