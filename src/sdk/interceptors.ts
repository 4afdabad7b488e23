import type { Interceptor } from "@connectrpc/connect";
import type { TokenSource } from "./token-sources.js";

/** Puts `authorization: Bearer <token>` from `source` on every call (nothing for an empty token). */
export function authInterceptor(source: TokenSource): Interceptor {
  return (next) => async (request) => {
    const token = await source.token();
    if (token) request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
}
