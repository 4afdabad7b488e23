import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { createSinkAddressPolicy } from "../../../../src/events/sink-address-policy.js";
import { createRemoteRegistry } from "../../../../src/registry/remote/remote-client.js";
import { RemoteError } from "../../../../src/registry/remote/remote-registry.js";
import { type HostileRegistry, startHostileRegistry } from "../../../support/hostile-registry.js";
import { blob, collect, image, readAll, sha256 } from "../../../support/remote-content.js";

/** How a hostile answer departs from the right one. */
const MUTATIONS = [
  "ok",
  "flip-byte",
  "truncate",
  "chunked",
  "short-length",
  "long-length",
  "garbage",
  "wrong-digest-header",
  "stall-body",
  "no-answer",
  "reset",
  "redirect-self",
  "redirect-metadata",
  "redirect-relative",
  "huge-length",
  "bearer-challenge",
  "basic-challenge",
  "status",
] as const;
type Mutation = (typeof MUTATIONS)[number];
const STATUSES = [200, 201, 204, 301, 400, 403, 404, 405, 429, 500, 503];
const OPERATIONS = [
  "manifest-tag",
  "manifest-digest",
  "head",
  "blob",
  "has-blob",
  "tags",
  "referrers",
] as const;

const TIMEOUT_MS = 250;
/** A call that has not settled by then hangs: the property fails. */
const HANG_MS = 8000;

describe("remote client: whatever a hostile registry answers", () => {
  const img = image([3000]);
  const layer = blob(20_000);
  const tagsJson = Buffer.from(JSON.stringify({ name: "app", tags: ["a", "b"] }));
  const referrersJson = Buffer.from(JSON.stringify({ schemaVersion: 2, manifests: [] }));
  let server: HostileRegistry;
  let plan: { mutation: Mutation; status: number; seed: number }[] = [];
  let step = 0;

  const rightAnswer = (req: IncomingMessage): { body: Buffer; headers: Record<string, string> } => {
    const url = req.url ?? "";
    if (url.startsWith("/token")) return { body: Buffer.from('{"token":"t","expires_in":60}'), headers: {} };
    if (url.includes("/blobs/")) return { body: layer.bytes, headers: {} };
    if (url.includes("/tags/list"))
      return { body: tagsJson, headers: { "content-type": "application/json" } };
    if (url.includes("/referrers/")) {
      return { body: referrersJson, headers: { "content-type": "application/vnd.oci.image.index.v1+json" } };
    }
    return {
      body: img.manifest,
      headers: { "content-type": img.mediaType, "docker-content-digest": img.digest },
    };
  };

  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const turn = plan[step++ % Math.max(plan.length, 1)] ?? { mutation: "ok", status: 200, seed: 0 };
    const { body, headers } = rightAnswer(req);
    const head = req.method === "HEAD";
    const send = (status: number, h: Record<string, string | number>, bytes: Buffer) => {
      res.writeHead(status, h);
      res.end(head ? undefined : bytes);
    };
    const withLength = { ...headers, "content-length": body.length };
    switch (turn.mutation) {
      case "ok":
        return send(200, withLength, body);
      case "flip-byte": {
        const flipped = Buffer.from(body);
        const at = turn.seed % flipped.length;
        flipped[at] = (flipped[at] as number) ^ 0x20;
        return send(200, withLength, flipped);
      }
      case "truncate":
        res.writeHead(200, withLength);
        if (head) return res.end();
        res.write(body.subarray(0, turn.seed % body.length), () => res.socket?.destroy());
        return;
      case "chunked":
        return send(200, headers, body);
      case "short-length":
        return send(
          200,
          { ...headers, "content-length": Math.max(0, body.length - 1 - (turn.seed % 10)) },
          body.subarray(0, Math.max(0, body.length - 1 - (turn.seed % 10))),
        );
      case "long-length":
        res.writeHead(200, { ...headers, "content-length": body.length + 1 + (turn.seed % 100) });
        if (head) return res.end();
        res.write(body, () => setTimeout(() => res.socket?.destroy(), 10));
        return;
      case "garbage": {
        const junk = Buffer.from(
          Array.from({ length: 1 + (turn.seed % 300) }, (_, i) => (turn.seed * 31 + i * 7) % 256),
        );
        return send(200, { ...headers, "content-length": junk.length }, junk);
      }
      case "wrong-digest-header":
        return send(
          200,
          { ...withLength, "docker-content-digest": sha256(Buffer.from(String(turn.seed))) },
          body,
        );
      case "stall-body":
        res.writeHead(200, withLength);
        if (!head) res.write(body.subarray(0, Math.floor(body.length / 2)));
        return;
      case "no-answer":
        return;
      case "reset":
        res.socket?.destroy();
        return;
      case "redirect-self":
        return send(302, { location: req.url ?? "/" }, Buffer.alloc(0));
      case "redirect-metadata":
        return send(307, { location: "http://169.254.169.254/latest/meta-data/" }, Buffer.alloc(0));
      case "redirect-relative":
        return send(
          302,
          { location: `${req.url ?? "/"}${req.url?.includes("?") ? "&" : "?"}r=${turn.seed}` },
          Buffer.alloc(0),
        );
      case "huge-length":
        res.writeHead(200, { ...headers, "content-length": 1_000_000_000 });
        if (head) return res.end();
        res.write(body, () => setTimeout(() => res.socket?.destroy(), 10));
        return;
      case "bearer-challenge":
        return send(
          401,
          { "www-authenticate": `Bearer realm="${server.url}/token",service="s"` },
          Buffer.alloc(0),
        );
      case "basic-challenge":
        return send(401, { "www-authenticate": 'Basic realm="r"' }, Buffer.from("no"));
      case "status":
        return send(
          turn.status,
          { "content-type": "application/json" },
          Buffer.from('{"errors":[{"code":"X"}]}'),
        );
    }
  };

  before(async () => {
    server = await startHostileRegistry((req, res) => answer(req, res));
  });
  after(() => server?.close());

  it("returns verified content or throws a RemoteError, and never hangs (50 runs)", async () => {
    const turn = fc.record({
      mutation: fc.constantFrom(...MUTATIONS),
      status: fc.constantFrom(...STATUSES),
      seed: fc.nat(1_000_000),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPERATIONS),
        fc.array(turn, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (operation, turns, withCredentials) => {
          plan = turns;
          step = 0;
          const remote = createRemoteRegistry({
            url: server.url,
            credentials: withCredentials ? { username: "u", password: "pw-secret" } : undefined,
            policy: createSinkAddressPolicy({ allow: [], allowLoopback: true }),
            allowHttp: true,
            clock: { now: () => Date.now() },
            timeoutMs: TIMEOUT_MS,
            maxManifestBytes: 64 * 1024,
          });
          const call = async (): Promise<void> => {
            switch (operation) {
              case "manifest-tag": {
                const m = await remote.getManifest("app", "v1");
                assert.equal(m.digest, sha256(m.content), "a manifest's digest is its bytes'");
                return;
              }
              case "manifest-digest": {
                const m = await remote.getManifest("app", img.digest);
                assert.equal(m.digest, img.digest);
                assert.deepEqual(Buffer.from(m.content), img.manifest);
                return;
              }
              case "head": {
                const h = await remote.headManifest("app", "v1");
                if (h) assert.match(h.digest, /^sha(256|512):[a-f0-9]+$/);
                return;
              }
              case "blob": {
                const b = await remote.getBlob("app", layer.digest);
                const bytes = await readAll(b.body);
                assert.deepEqual(bytes, layer.bytes, "a blob read to its end is the right one");
                return;
              }
              case "has-blob":
                assert.equal(typeof (await remote.hasBlob("app", layer.digest)), "boolean");
                return;
              case "tags":
                for (const t of await collect(remote.tags("app"))) assert.equal(typeof t, "string");
                return;
              case "referrers":
                assert.ok(Array.isArray(await remote.referrers("app", img.digest)));
                return;
            }
          };
          let timer: NodeJS.Timeout | undefined;
          const hang = new Promise<"hang">((resolve) => {
            timer = setTimeout(() => resolve("hang"), HANG_MS);
          });
          try {
            const outcome = await Promise.race([
              call().then(
                () => "ok" as const,
                (err: unknown) => err,
              ),
              hang,
            ]);
            assert.notEqual(outcome, "hang", `${operation} hung on ${JSON.stringify(turns)}`);
            if (outcome !== "ok") {
              assert.ok(
                outcome instanceof RemoteError,
                `${operation} on ${JSON.stringify(turns)} threw ${String(outcome)}${(outcome as Error)?.stack ?? ""}`,
              );
              assert.ok(!outcome.message.includes("pw-secret"));
            }
          } finally {
            clearTimeout(timer);
            await remote.close();
          }
        },
      ),
      { numRuns: Number(process.env.WHARF_REMOTE_PROPERTY_RUNS ?? 50) },
    );
  });
});
