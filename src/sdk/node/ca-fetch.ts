import { Agent, fetch as undiciFetch } from "undici";
import type { FetchFunction } from "../http.js";

/**
 * A fetch that trusts the certificate authorities `ca` (PEM) instead of the system's, for the
 * client's `fetch` option (the STS, the registry helpers and the default Connect transport use it)
 * when the server's certificate was signed by a private CA:
 *
 * ```ts
 * const ca = readFileSync("ca.pem");
 * createWharfClient({ apiUrl: "https://wharf.internal:8080", fetch: caFetch(ca), transport: nodeTransport({ ca }) });
 * ```
 *
 * One connection pool serves every call of the returned fetch; `close()` it when done.
 */
export function caFetch(
  ca: string | Buffer | (string | Buffer)[],
): FetchFunction & { close(): Promise<void> } {
  const dispatcher = new Agent({ connect: { ca } });
  const fetchFn = ((input: Parameters<FetchFunction>[0], init?: Parameters<FetchFunction>[1]) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher,
    })) as unknown as FetchFunction;
  return Object.assign(fetchFn, { close: () => dispatcher.close() });
}
