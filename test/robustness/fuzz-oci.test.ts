import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { forEachEngine } from "../support/databases.js";
import { buildImage, OCI_MANIFEST, pushBlob, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";
import {
  anyText,
  assertNoServerFaultLogged,
  assertOciAnswer,
  describeExchange,
  fuzzParameters,
  percentEncode,
  percentEncodeText,
  type RawRequest,
  type RawResponse,
  rawRequest,
  StatusTally,
} from "./robustness-support.js";

// Properties of the OCI registry under hostile input: whatever names, references, digests, Range
// and Content-Range headers a client sends, and in whatever order it drives an upload session,
// the registry never answers a 5xx, every error is the OCI error envelope, and a blob whose upload
// finishes reads back with the digest it was finished with.

const sha256 = (data: Uint8Array) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString("hex"));

/** Digests: well-formed, and wrong in each way (algorithm, hex length, case, characters). */
const digestText = fc.oneof(
  hex(32).map((h) => `sha256:${h}`),
  hex(64).map((h) => `sha512:${h}`),
  fc
    .tuple(
      fc.constantFrom(
        "sha256",
        "sha512",
        "md5",
        "SHA256",
        "sha384",
        "sha256+b64",
        "sha-256",
        "",
        "sha256:sha256",
      ),
      fc.oneof(
        hex(32),
        hex(64),
        fc.integer({ min: 0, max: 70 }).chain((n) => hex(n).map((h) => h.slice(0, n))),
        hex(32).map((h) => h.toUpperCase()),
        hex(32).map((h) => `${h.slice(0, 63)}g`),
        fc.constantFrom("", "=", "-", "_", "..", "%00"),
      ),
    )
    .map(([algorithm, value]) => `${algorithm}:${value}`),
);

/** Printable ASCII a request line may carry raw (no space, `?`, `#` or `/`). */
const rawChar = fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@%[]{}|\\^`\"<>".split(""));
const rawText = (maxLength: number) => fc.array(rawChar, { maxLength }).map((c) => c.join(""));

const malformedEscape = fc.constantFrom(
  "%",
  "%z",
  "%zz",
  "%e0%a0",
  "%c0%af",
  "%ff",
  "%00",
  "%2",
  "t%ff",
  "%E0%A4%A",
);

/** The last path segment: a tag, a digest, an upload id, or junk. */
const reference = fc.oneof(
  fc.constantFrom("latest", "v1", "_x", "-bad", "a".repeat(128), "a".repeat(129), ""),
  digestText,
  hex(16),
  malformedEscape,
  anyText(20).map(percentEncodeText),
  fc.uint8Array({ maxLength: 12 }).map(percentEncode),
  rawText(20),
);

/** Repository names: existing, well-formed, and each way a name can be wrong. */
const repositoryName = fc.oneof(
  { weight: 4, arbitrary: fc.constant("acme/app") },
  { weight: 2, arbitrary: fc.constantFrom("acme/app/sub", "acme/missing", "nobody/app", "public/x") },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { minLength: 1, maxLength: 4 })
      .map((parts) => parts.join("/")),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      "ACME/app",
      "acme//app",
      "acme/../app",
      "acme/./app",
      "acme/app/",
      `acme/${"a".repeat(300)}`,
      "acme/blobs",
      "acme/manifests/x",
      "acme/_service",
      "%61cme/app",
    ),
  },
  { weight: 1, arbitrary: anyText(20).map(percentEncodeText) },
  { weight: 1, arbitrary: rawText(20) },
  { weight: 1, arbitrary: malformedEscape.map((e) => `acme/${e}`) },
);

/** The methods each endpoint serves; a request mostly uses one of them, sometimes any other. */
const ENDPOINT_METHODS: Record<string, readonly string[]> = {
  "manifests/": ["GET", "HEAD", "PUT", "DELETE"],
  "blobs/": ["GET", "HEAD", "DELETE"],
  "referrers/": ["GET"],
  "tags/list": ["GET"],
  "_service/history/": ["GET"],
  "blobs/uploads/": ["POST", "PATCH", "PUT", "GET", "DELETE"],
};
const endpointAndMethod = fc.constantFrom(...Object.keys(ENDPOINT_METHODS)).chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    method: fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...(ENDPOINT_METHODS[endpoint] as string[])) },
      { weight: 1, arbitrary: fc.constantFrom("GET", "HEAD", "PUT", "DELETE", "PATCH", "POST", "OPTIONS") },
    ),
  }),
);

/** Printable Latin-1 text, as a header value may carry. */
const headerValue = (maxLength: number) =>
  anyText(maxLength).map((text) => text.replace(/[^\x20-\x7e\xa0-\xff]/g, "?"));

const queryValue = fc.oneof(
  digestText.map(encodeURIComponent),
  fc.constantFrom(
    "0",
    "-1",
    "1",
    "1000000000000",
    "abc",
    "",
    "acme/app",
    "2024-01-01T00:00:00Z",
    "not-a-time",
  ),
  anyText(16).map(percentEncodeText),
  malformedEscape,
);
const query = fc.oneof(
  fc.constant(""),
  fc
    .array(
      fc.tuple(
        fc.constantFrom("digest", "mount", "from", "n", "last", "start", "end", "artifactType", "x"),
        queryValue,
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`),
);

const mediaType = fc.oneof(
  fc.constantFrom(
    OCI_MANIFEST,
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.v1+prettyjws",
    "application/json",
    "*/*",
    "text/plain",
  ),
  headerValue(30),
);

/** A manifest body: the pushed one, a plausible one, JSON of any shape, or bytes. */
function manifestBody(known: Buffer): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.constant(known),
    fc
      .record({
        schemaVersion: fc.oneof(fc.constant(2), fc.jsonValue()),
        mediaType,
        config: fc.oneof(
          fc.record({
            mediaType,
            digest: digestText,
            size: fc.oneof(fc.nat(), fc.constant(-1), fc.constant(1e20)),
          }),
          fc.jsonValue(),
        ),
        layers: fc.oneof(
          fc.array(fc.record({ mediaType, digest: digestText, size: fc.nat() }), { maxLength: 3 }),
          fc.jsonValue(),
        ),
      })
      .map((m) => Buffer.from(JSON.stringify(m))),
    fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
    fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)),
  );
}

describe("fuzz: OCI registry requests", () => {
  let wharf: TestServer;
  let token: string;
  let apiToken: string;
  /** A blob of repo acme/ranges that the endpoint fuzz never names (so it is never deleted). */
  const rangeBlob = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) % 256));
  const image = buildImage("fuzz");

  before(async () => {
    wharf = await startTestServer();
    await wharf.create("/iam/v2/groups", { name: "acme" });
    token = await wharf.registryToken();
    apiToken = wharf.adminToken;
    await pushImage(wharf, "acme/app", "latest", token, image);
    await pushBlob(wharf, "acme/ranges", rangeBlob, token);
  });
  after(() => wharf.close());

  const send = async (req: RawRequest): Promise<RawResponse> => {
    const res = await rawRequest(wharf.registryUrl, req);
    assertOciAnswer(req, res);
    return res;
  };

  it("Range on a blob GET/HEAD: 200 whole, 206 exactly the bytes Content-Range names, or 416", async () => {
    const bound = fc.oneof(
      fc.nat({ max: 1200 }).map(String),
      fc.constantFrom("", "0", "999", "1000", "1001", "-1", "99999999999999999999", "1e3", " 5", "0x10"),
    );
    const range = fc.oneof(
      fc.tuple(bound, bound).map(([a, b]) => `bytes=${a}-${b}`),
      fc.tuple(bound, bound, bound, bound).map(([a, b, c, d]) => `bytes=${a}-${b},${c}-${d}`),
      fc
        .tuple(fc.constantFrom("items", "Bytes", "bytes ", ""), bound, bound)
        .map(([u, a, b]) => `${u}=${a}-${b}`),
      headerValue(30),
    );
    const digest = sha256(rangeBlob);
    await fc.assert(
      fc.asyncProperty(range, fc.constantFrom("GET", "HEAD"), async (rangeHeader, method) => {
        const req: RawRequest = {
          method,
          path: `/v2/acme/ranges/blobs/${digest}`,
          headers: { authorization: `Bearer ${token}`, range: rangeHeader },
        };
        const res = await send(req);
        const what = describeExchange(req, res);
        assert.ok([200, 206, 416].includes(res.status), what);
        const head = method === "HEAD";
        if (res.status === 200) {
          assert.equal(res.headers["content-length"], String(rangeBlob.length), what);
          if (!head) assert.ok(res.body.equals(rangeBlob), what);
        } else if (res.status === 206) {
          const m = /^bytes (\d+)-(\d+)\/1000$/.exec(String(res.headers["content-range"]));
          assert.ok(m, `Content-Range: ${what}`);
          const [start, end] = [Number(m[1]), Number(m[2])];
          assert.ok(start <= end && end < rangeBlob.length, what);
          assert.equal(res.headers["content-length"], String(end - start + 1), what);
          if (!head) assert.ok(res.body.equals(rangeBlob.subarray(start, end + 1)), what);
        } else {
          assert.equal(res.headers["content-range"], "bytes */1000", what);
        }
      }),
      fuzzParameters("OCI Range", 150),
    );
  });

  it("names, references, digests, media types and queries on every endpoint: never a 5xx", async (t) => {
    const tally = new StatusTally();
    const known = fc.constantFrom("latest", image.digest, image.configDigest, ...image.layerDigests);
    const request = fc.record({
      target: endpointAndMethod,
      name: repositoryName,
      reference: fc.oneof({ weight: 1, arbitrary: known }, { weight: 2, arbitrary: reference }),
      query,
      accept: fc.option(mediaType, { nil: undefined }),
      contentType: fc.option(mediaType, { nil: undefined }),
      body: fc.option(manifestBody(image.manifest), { nil: undefined }),
      auth: fc.constantFrom("registry", "registry", "registry", "none", "api", "garbage", "basic-garbage"),
    });
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const headers: Record<string, string> = {};
        if (input.auth === "registry") headers.authorization = `Bearer ${token}`;
        if (input.auth === "api") headers.authorization = `Bearer ${apiToken}`;
        if (input.auth === "garbage") headers.authorization = "Bearer e30.e30.e30";
        if (input.auth === "basic-garbage") headers.authorization = "Basic !!!";
        if (input.accept !== undefined) headers.accept = input.accept;
        if (input.contentType !== undefined) headers["content-type"] = input.contentType;
        const { endpoint, method } = input.target;
        const last = endpoint === "tags/list" ? "" : input.reference;
        const res = await send({
          method,
          path: `/v2/${input.name}/${endpoint}${last}${input.query}`,
          headers,
          ...(input.body === undefined ? {} : { body: input.body }),
        });
        tally.add(res.status);
      }),
      fuzzParameters("OCI endpoints", 400),
    );
    t.diagnostic(`statuses: ${tally}`);
    tally.assertReached([[200, 300]]);
  });

  it("still serves normal requests afterwards, and logged no server fault", async () => {
    const base = await rawRequest(wharf.registryUrl, {
      method: "GET",
      path: "/v2/",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(base.status, 200);
    const blob = await rawRequest(wharf.registryUrl, {
      method: "GET",
      path: `/v2/acme/ranges/blobs/${sha256(rangeBlob)}`,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.ok(blob.body.equals(rangeBlob));
    assertNoServerFaultLogged(wharf.logLines);
  });
});

/** One step a client may take on an upload session (the data of each step is its own chunk). */
type UploadStep =
  | { kind: "start" }
  | { kind: "monolithic"; data: Uint8Array; digest: "right" | "wrong" }
  | {
      kind: "patch";
      data: Uint8Array;
      contentRange:
        | "none"
        | "right"
        | "bytes=right"
        | { start: number }
        | { raw: string }
        | "length-mismatch";
      chunked: boolean;
    }
  | { kind: "status" }
  | { kind: "put"; data: Uint8Array; digest: "right" | "wrong" | "malformed" | "none" | "sha512-right" }
  | { kind: "delete" }
  | { kind: "stale" };

const chunk = fc.uint8Array({ maxLength: 700 });
const uploadStep: fc.Arbitrary<UploadStep> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: "start" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("monolithic" as const),
      data: chunk,
      digest: fc.constantFrom("right" as const, "wrong" as const),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("patch" as const),
      data: chunk,
      contentRange: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom("none" as const, "right" as const, "bytes=right" as const) },
        { weight: 1, arbitrary: fc.record({ start: fc.nat({ max: 3000 }) }) },
        { weight: 1, arbitrary: fc.record({ raw: headerValue(20) }) },
        { weight: 1, arbitrary: fc.constant("length-mismatch" as const) },
      ),
      chunked: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "status" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("put" as const),
      data: fc.oneof(fc.constant(new Uint8Array()), chunk),
      digest: fc.constantFrom("right", "right", "wrong", "malformed", "none", "sha512-right") as fc.Arbitrary<
        "right" | "wrong" | "malformed" | "none" | "sha512-right"
      >,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "delete" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "stale" as const }) },
);

/** The `Range` an upload holding `size` bytes reports (`0-0` when empty). */
const uploadRange = (size: number) => `0-${Math.max(size - 1, 0)}`;

forEachEngine("fuzz: OCI upload sequences", (db) => {
  let wharf: TestServer;
  let token: string;
  const name = "acme/uploads";

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer(databaseUrl ? { databaseUrl } : {});
    await wharf.create("/iam/v2/groups", { name: "acme" });
    token = await wharf.registryToken();
  });
  after(() => wharf.close());

  it("random POST/PATCH/PUT/GET/DELETE sequences: never a 5xx; a finished blob reads back with its digest", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(uploadStep, { minLength: 1, maxLength: 10 }), async (steps) => {
        const auth = { authorization: `Bearer ${token}` };
        /** The model: the open session's location and the bytes it holds, if one is open. */
        let session: { location: string; bytes: Buffer } | undefined;
        let stale = `/v2/${name}/blobs/uploads/${"0".repeat(32)}`;
        const send = async (req: RawRequest) => {
          const res = await rawRequest(wharf.registryUrl, req);
          assertOciAnswer(req, res);
          return { res, what: describeExchange(req, res) };
        };
        const readsBack = async (digest: string, bytes: Buffer) => {
          const { res, what } = await send({
            method: "GET",
            path: `/v2/${name}/blobs/${digest}`,
            headers: auth,
          });
          assert.equal(res.status, 200, what);
          const [algorithm] = digest.split(":");
          assert.equal(
            `${algorithm}:${createHash(algorithm as string)
              .update(res.body)
              .digest("hex")}`,
            digest,
            what,
          );
          assert.ok(res.body.equals(bytes), `blob bytes differ from those uploaded: ${what}`);
        };

        for (const step of steps) {
          switch (step.kind) {
            case "start": {
              const { res, what } = await send({
                method: "POST",
                path: `/v2/${name}/blobs/uploads/`,
                headers: auth,
              });
              assert.equal(res.status, 202, what);
              assert.equal(res.headers.range, "0-0", what);
              session = { location: String(res.headers.location), bytes: Buffer.alloc(0) };
              break;
            }
            case "monolithic": {
              const data = Buffer.from(step.data);
              const digest =
                step.digest === "right" ? sha256(data) : sha256(Buffer.concat([data, Buffer.from("x")]));
              const { res, what } = await send({
                method: "POST",
                path: `/v2/${name}/blobs/uploads/?digest=${digest}`,
                headers: { ...auth, "content-type": "application/octet-stream" },
                body: data,
              });
              if (step.digest === "right") {
                assert.equal(res.status, 201, what);
                await readsBack(digest, data);
              } else assert.equal(res.status, 400, what);
              break;
            }
            case "patch": {
              const data = Buffer.from(step.data);
              const headers: Record<string, string> = { ...auth, "content-type": "application/octet-stream" };
              if (step.chunked) headers["transfer-encoding"] = "chunked";
              const size = session?.bytes.length ?? 0;
              const cr = step.contentRange;
              if (cr === "right") headers["content-range"] = `${size}-${size + data.length - 1}`;
              else if (cr === "bytes=right")
                headers["content-range"] = `bytes=${size}-${size + data.length - 1}`;
              else if (cr === "length-mismatch")
                headers["content-range"] = `${size}-${size + data.length + 5}`;
              else if (cr !== "none" && "start" in cr)
                headers["content-range"] = `${cr.start}-${cr.start + data.length - 1}`;
              else if (cr !== "none") headers["content-range"] = cr.raw;
              const { res, what } = await send({
                method: "PATCH",
                path: session?.location ?? stale,
                headers,
                body: data,
              });
              if (session === undefined) {
                assert.equal(res.status, 404, what);
                break;
              }
              // A correct chunk (no Content-Range, or the one that continues the session) is taken.
              const correct =
                data.length > 0 &&
                (cr === "none" ||
                  cr === "right" ||
                  cr === "bytes=right" ||
                  (typeof cr === "object" && "start" in cr && cr.start === size));
              if (correct) assert.equal(res.status, 202, what);
              if (res.status === 202) session.bytes = Buffer.concat([session.bytes, data]);
              if (res.status === 202)
                assert.equal(res.headers.range, uploadRange(session.bytes.length), what);
              break;
            }
            case "status": {
              const { res, what } = await send({
                method: "GET",
                path: session?.location ?? stale,
                headers: auth,
              });
              if (session === undefined) assert.equal(res.status, 404, what);
              else {
                assert.equal(res.status, 204, what);
                assert.equal(res.headers.range, uploadRange(session.bytes.length), what);
              }
              break;
            }
            case "put": {
              const data = Buffer.from(step.data);
              const whole = Buffer.concat([session?.bytes ?? Buffer.alloc(0), data]);
              const digest = {
                right: sha256(whole),
                wrong: sha256(Buffer.concat([whole, Buffer.from("x")])),
                malformed: "sha256:abc",
                none: undefined,
                "sha512-right": `sha512:${createHash("sha512").update(whole).digest("hex")}`,
              }[step.digest];
              const path = `${session?.location ?? stale}${digest === undefined ? "" : `?digest=${digest}`}`;
              const { res, what } = await send({
                method: "PUT",
                path,
                headers: { ...auth, "content-type": "application/octet-stream" },
                body: data,
              });
              if (session === undefined) {
                assert.equal(res.status, 404, what);
                break;
              }
              const right = step.digest === "right" || step.digest === "sha512-right";
              if (right) assert.equal(res.status, 201, what);
              if (res.status === 201) {
                assert.ok(right, `finished with a digest that is not the content's: ${what}`);
                assert.equal(res.headers["docker-content-digest"], digest, what);
                stale = session.location;
                session = undefined;
                await readsBack(digest as string, whole);
                break;
              }
              // A refused finish either ended the session or left it exactly as it was.
              const after = await send({ method: "GET", path: session.location, headers: auth });
              if (after.res.status === 404) {
                stale = session.location;
                session = undefined;
              } else {
                assert.equal(after.res.status, 204, after.what);
                assert.equal(after.res.headers.range, uploadRange(session.bytes.length), after.what);
              }
              break;
            }
            case "delete": {
              const { res, what } = await send({
                method: "DELETE",
                path: session?.location ?? stale,
                headers: auth,
              });
              assert.equal(res.status, session === undefined ? 404 : 204, what);
              if (session) {
                stale = session.location;
                session = undefined;
              }
              break;
            }
            case "stale": {
              const { res, what } = await send({ method: "PATCH", path: stale, headers: auth, body: "late" });
              assert.equal(res.status, 404, what);
              break;
            }
          }
        }
      }),
      fuzzParameters(`OCI upload sequences [${db.engine}]`, 40),
    );
  });

  it("logged no server fault", () => assertNoServerFaultLogged(wharf.logLines));
});
