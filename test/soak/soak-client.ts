import { createHash } from "node:crypto";

/** A request that failed as a client sees it: a status it did not expect, or no answer at all. */
export class SoakRequestError extends Error {
  constructor(
    /** The `x-soak-id` the request carried (HAProxy logs it with the server that got it). */
    readonly requestId: string,
    /** The HTTP status, or 0 when no answer came (reset, timeout). */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** `sha256:<hex>` of `bytes`. */
export function sha256Of(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** HTTP against one front, tagging every request with an id HAProxy logs. */
export interface SoakClient {
  /**
   * Sends the request and returns the response when its status is one of `expect`; otherwise (or
   * when no answer comes within 60 s) throws {@link SoakRequestError}. `idPrefix` names the
   * operation; each request gets `<idPrefix>.<n>`.
   */
  request(
    idPrefix: string,
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: Uint8Array | string; expect: number[] },
  ): Promise<{ status: number; headers: Headers; body: Buffer }>;
}

/** A client of `baseUrl` sending `Authorization: Bearer <token()>`. */
export function soakClient(baseUrl: string, token: () => string): SoakClient {
  const sequence = new Map<string, number>();
  return {
    async request(idPrefix, path, init) {
      const n = (sequence.get(idPrefix) ?? 0) + 1;
      sequence.set(idPrefix, n);
      const requestId = `${idPrefix}.${n}`;
      let res: Response;
      let body: Buffer;
      try {
        res = await fetch(new URL(path, baseUrl), {
          method: init.method ?? "GET",
          headers: { ...init.headers, authorization: `Bearer ${token()}`, "x-soak-id": requestId },
          ...(init.body === undefined ? {} : { body: init.body }),
          signal: AbortSignal.timeout(60_000),
        });
        body = Buffer.from(await res.arrayBuffer());
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
        throw new SoakRequestError(requestId, 0, `no answer (${cause})`);
      }
      if (!init.expect.includes(res.status)) {
        throw new SoakRequestError(requestId, res.status, `${res.status}: ${body.toString("utf8", 0, 200)}`);
      }
      return { status: res.status, headers: res.headers, body };
    },
  };
}
