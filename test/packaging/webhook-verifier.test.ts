import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

const run = promisify(execFile);
const repo = new URL("../..", import.meta.url).pathname;
const ISSUER = "https://wharf.example.com";
const GROUP = "g-packaging";

/** A receiver outside the repository, run by plain `node`: no tsx, only the package's exports. */
const CONSUMER = `
import { createPublicKey } from "node:crypto";
import { createWebhookVerifier, WebhookVerificationError } from "wharf/webhook-verifier";

const { jwk, token, body } = JSON.parse(process.argv[2]);
const key = createPublicKey({ key: jwk, format: "jwk" });
const verify = createWebhookVerifier({ issuer: "${ISSUER}", group: "${GROUP}", keys: async () => key });
const headers = {
  authorization: "Bearer " + token,
  "ce-id": "e-1",
  "ce-specversion": "1.0",
  "ce-source": "${ISSUER}",
  "ce-type": "dev.wharf.registry.push.v1",
};
const event = await verify(headers, body);
let refused;
try {
  await verify(headers, body + " ");
} catch (err) {
  refused = { typed: err instanceof WebhookVerificationError, status: err.status, message: err.message };
}
process.stdout.write(JSON.stringify({ type: event.type, body: event.body, refused }));
`;

/** The same receiver's types, checked by tsc against the package's declarations. */
const TYPED_CONSUMER = `
import { createWebhookVerifier, WebhookVerificationError, type VerifiedWebhookEvent } from "wharf/webhook-verifier";

const verify = createWebhookVerifier({ issuer: "${ISSUER}", group: "${GROUP}" });
export async function receive(headers: Headers, body: Uint8Array): Promise<string | number> {
  try {
    const event: VerifiedWebhookEvent = await verify(headers, body);
    return event.type;
  } catch (err) {
    if (err instanceof WebhookVerificationError) {
      const status: 400 | 401 | 403 = err.status;
      return status;
    }
    throw err;
  }
}
// @ts-expect-error the issuer is required: proves the declarations are read, not an untyped module
createWebhookVerifier({ group: "${GROUP}" });
`;

describe("the wharf/webhook-verifier export", () => {
  let dir: string;
  before(async () => {
    assert.ok(
      existsSync(join(repo, "dist", "events", "webhook-verifier.js")),
      "dist/ is built (npm run build; scripts/run-tests.mjs does it)",
    );
    dir = await mkdtemp(join(tmpdir(), "wharf-packaging-"));
    await mkdir(join(dir, "node_modules"));
    await symlink(repo, join(dir, "node_modules", "wharf"), "dir");
    await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("verifies a delivery from plain Node, and refuses a changed body with its typed error", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
    const body = JSON.stringify({ actor: { subject: "u-1" }, body: { tag: "v1" } });
    const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`;
    const token = await new SignJWT({ webhook: { digest } })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(ISSUER)
      .setAudience("customer")
      .setSubject(`webhook:${GROUP}`)
      .setExpirationTime("5m")
      .sign(privateKey);
    await writeFile(join(dir, "consumer.mjs"), CONSUMER);
    const { NODE_OPTIONS: _, ...env } = process.env;
    const { stdout } = await run(
      process.execPath,
      ["consumer.mjs", JSON.stringify({ jwk: await exportJWK(publicKey), token, body })],
      { cwd: dir, env },
    );
    assert.deepEqual(JSON.parse(stdout), {
      type: "dev.wharf.registry.push.v1",
      body: { tag: "v1" },
      refused: { typed: true, status: 403, message: "body does not match the signed digest" },
    });
  });

  it("has type declarations a TypeScript consumer compiles against", async () => {
    await writeFile(join(dir, "consumer.ts"), TYPED_CONSUMER);
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          types: ["node"],
          typeRoots: [join(repo, "node_modules", "@types")],
        },
        files: ["consumer.ts"],
      }),
    );
    const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch(
      (err: { stdout: string }) => ({ stdout: err.stdout, failed: true }),
    );
    assert.deepEqual(result, { stdout: "", stderr: "" }, "tsc reports nothing");
  });
});
