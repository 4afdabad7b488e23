import { type IncomingHttpHeaders, request } from "node:http";

/** A whole HTTP response, body read. */
export interface PlainResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One HTTP/1.1 request on its own connection (no agent, no keep-alive), so a server killed
 * mid-request fails exactly the requests it was serving and nothing pools sockets past a test.
 * Resolves with the whole response; rejects when the connection fails or breaks off (e.g. the
 * server died).
 */
export function plainRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Uint8Array } = {},
): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers["content-length"] = init.body.length;
    const req = request(url, { method: init.method ?? "GET", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("aborted", () => reject(new Error(`${init.method ?? "GET"} ${url}: response aborted`)));
      res.on("end", () => {
        if (!res.complete) {
          reject(new Error(`${init.method ?? "GET"} ${url}: response broke off`));
          return;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.on("error", reject);
    req.end(init.body);
  });
}
