/**
 * Shared pieces of the robustness suites (test/robustness/): how many property runs and which seed,
 * raw HTTP requests that send exactly the bytes given, and the "never a 5xx, every error
 * structured" checks for the API (google.rpc.Status JSON) and the registry (OCI error envelope).
 *
 * Runs and seed: each property states its CI run count; `WHARF_FUZZ_RUNS=N` replaces it. The seed
 * is fixed unless `WHARF_FUZZ_SEED` says otherwise: an integer replays that seed (with
 * `WHARF_FUZZ_PATH` from a failure report, exactly that counterexample), `random` draws one and
 * prints it (ignored when `CI=true`, where the seed stays fixed). `npm run fuzz` is the long run.
 */
import assert from "node:assert/strict";
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import fc, { type Parameters } from "fast-check";
import { OCI_ERROR_STATUS } from "../../src/oci/oci-errors.js";

/** The seed of every CI run, so a failure there reproduces anywhere. */
export const FIXED_FUZZ_SEED = 20_261_125;

const drawnSeed = Math.floor(Math.random() * 0x7fffffff);

/** The fast-check seed this process uses (see the module comment). */
export function fuzzSeed(): number {
  const asked = process.env.WHARF_FUZZ_SEED ?? "";
  if (/^-?\d+$/.test(asked)) return Number(asked);
  if (asked === "random" && process.env.CI !== "true") return drawnSeed;
  return FIXED_FUZZ_SEED;
}

/**
 * fast-check parameters for one property: `ciRuns` runs (or `WHARF_FUZZ_RUNS`) with the process's
 * seed; a randomly drawn seed is printed on stderr with the property's name, so any run replays.
 */
export function fuzzParameters<T>(property: string, ciRuns: number): Parameters<T> {
  const seed = fuzzSeed();
  const runs = Number(process.env.WHARF_FUZZ_RUNS ?? "");
  const numRuns = Number.isSafeInteger(runs) && runs > 0 ? runs : ciRuns;
  if (process.env.WHARF_FUZZ_SEED === "random" && seed === drawnSeed) {
    process.stderr.write(
      `fuzz "${property}": seed ${seed}, ${numRuns} runs (replay: WHARF_FUZZ_SEED=${seed})\n`,
    );
  }
  const path = process.env.WHARF_FUZZ_PATH;
  return { seed, numRuns, ...(path ? { path } : {}), endOnFailure: true, includeErrorInReport: true };
}

/** An HTTP answer read completely. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What {@link rawRequest} sends; header values may repeat (arrays). */
export interface RawRequest {
  method: string;
  /** Sent as written: no normalisation, no percent-encoding (printable Latin-1 only, as Node allows). */
  path: string;
  headers?: Record<string, string | string[]>;
  body?: Uint8Array | string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/**
 * One HTTP/1.1 request to `baseUrl` with exactly the path, headers and body given (fetch would
 * normalise the path and refuse some headers). Rejects only when no response arrives (the
 * connection failed or was cut), which the suites treat as a crash.
 */
export function rawRequest(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: framed(req),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}

/**
 * The request's headers with Content-Length set for a body unless Transfer-Encoding is given: Node
 * would send a GET's or DELETE's body without any framing otherwise.
 */
function framed(req: RawRequest): Record<string, string | string[]> | undefined {
  if (req.body === undefined || req.headers?.["transfer-encoding"] !== undefined) return req.headers;
  return { "content-length": String(Buffer.byteLength(req.body)), ...req.headers };
}

/** A short description of a request and its answer for assertion messages. */
export function describeExchange(req: RawRequest, res: RawResponse): string {
  const body =
    req.body === undefined
      ? ""
      : ` body=${JSON.stringify(Buffer.from(req.body).toString("latin1").slice(0, 200))}`;
  return `${req.method} ${req.path.slice(0, 300)} headers=${JSON.stringify(req.headers ?? {}).slice(0, 300)}${body} → ${res.status} ${res.body.toString("utf8").slice(0, 300)}`;
}

/**
 * Asserts the API's invariant for any input: never a 5xx, and every error (4xx) is
 * google.rpc.Status JSON with a non-OK numeric `code` and a non-empty `message`.
 */
export function assertApiAnswer(req: RawRequest, res: RawResponse): void {
  const what = describeExchange(req, res);
  assert.ok(res.status >= 200 && res.status < 500, `5xx or no status: ${what}`);
  if (res.status < 400 || req.method === "HEAD") return;
  assert.match(String(res.headers["content-type"]), /^application\/json/, `error is not JSON: ${what}`);
  const body = JSON.parse(res.body.toString("utf8")) as { code?: unknown; message?: unknown };
  assert.ok(
    Number.isInteger(body.code) && (body.code as number) > 0 && (body.code as number) <= 16,
    `error without a gRPC code: ${what}`,
  );
  assert.ok(typeof body.message === "string" && body.message !== "", `error without a message: ${what}`);
}

/**
 * Asserts the registry's invariant for any input: never a 5xx, and every error (4xx, body unless
 * HEAD) is `{"errors":[{code, message}]}` with a code of the OCI error table.
 */
export function assertOciAnswer(req: RawRequest, res: RawResponse): void {
  const what = describeExchange(req, res);
  assert.ok(res.status >= 200 && res.status < 500, `5xx or no status: ${what}`);
  if (res.status < 400 || req.method === "HEAD") return;
  assert.match(String(res.headers["content-type"]), /^application\/json/, `error is not JSON: ${what}`);
  const body = JSON.parse(res.body.toString("utf8")) as { errors?: { code?: unknown; message?: unknown }[] };
  assert.ok(Array.isArray(body.errors) && body.errors.length > 0, `no errors array: ${what}`);
  for (const error of body.errors) {
    assert.ok(
      typeof error.code === "string" && error.code in OCI_ERROR_STATUS,
      `unknown OCI error code: ${what}`,
    );
    assert.ok(typeof error.message === "string" && error.message !== "", `error without a message: ${what}`);
  }
}

/**
 * Asserts the server logged no 5xx status and no error-level line during the run: this also
 * catches a fault whose answer never reached the client (a connection cut after the headers).
 */
export function assertNoServerFaultLogged(logLines: readonly Record<string, unknown>[]): void {
  const faults = logLines.filter(
    (line) => line.level === "error" || (typeof line.status === "number" && line.status >= 500),
  );
  assert.deepEqual(faults.slice(0, 3), [], `${faults.length} server fault(s) logged`);
}

/**
 * Text of any code points, lone surrogates included (they become U+FFFD once UTF-8 encoded).
 * Built from integers because fast-check's own full-Unicode string units take seconds to set up.
 */
export function anyText(maxLength: number): fc.Arbitrary<string> {
  const codePoint = fc.oneof(
    fc.integer({ min: 0, max: 0x7f }),
    fc.integer({ min: 0x80, max: 0xffff }),
    fc.integer({ min: 0x10000, max: 0x10ffff }),
  );
  return fc.array(codePoint, { maxLength }).map((points) => String.fromCodePoint(...points));
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encodes every byte that is not unreserved (so invalid UTF-8 can be sent too). */
export function percentEncode(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    out +=
      byte < 0x80 && UNRESERVED.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** `text` as UTF-8, percent-encoded for a URL path or query. */
export const percentEncodeText = (text: string): string => percentEncode(Buffer.from(text, "utf8"));

/**
 * Counts the statuses a property saw, so a suite can show (and assert) that its inputs reached
 * past validation: a fuzzer that only ever hears 400 tests nothing but the first check.
 */
export class StatusTally {
  private readonly counts = new Map<number, number>();

  add(status: number): void {
    this.counts.set(status, (this.counts.get(status) ?? 0) + 1);
  }

  /** How many answers had a status in [from, to). */
  within(from: number, to: number): number {
    let n = 0;
    for (const [status, count] of this.counts) if (status >= from && status < to) n += count;
    return n;
  }

  /**
   * Asserts some answers fell in each [from, to) range, once the property ran at least 100 times
   * (a short replay run may simply not reach them).
   */
  assertReached(ranges: readonly [number, number][]): void {
    let total = 0;
    for (const count of this.counts.values()) total += count;
    if (total < 100) return;
    for (const [from, to] of ranges) {
      assert.ok(
        this.within(from, to) > 0,
        `no answer in ${from}–${to - 1}, so the inputs stopped short: ${this}`,
      );
    }
  }

  /** `200×12 400×300 …`, for the test's diagnostic line. */
  toString(): string {
    return [...this.counts]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}×${count}`)
      .join(" ");
  }
}
