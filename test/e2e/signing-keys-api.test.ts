import assert from "node:assert/strict";
import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as sk from "../../src/gen/platform/registry/v2/signing_keys_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
interface ApiKey {
  uid: string;
  name: string;
  publicKeyPem: string;
  algorithm: string;
  fingerprint: string;
  createTime: string;
}

const spki = (key: KeyObject) => key.export({ type: "spki", format: "pem" }).toString();
const fingerprintOf = (pem: string) =>
  createHash("sha256")
    .update(createPublicKey(pem).export({ type: "spki", format: "der" }))
    .digest("hex");

/** One key pair of every accepted kind, made here with node:crypto, and the algorithm each reads as. */
const ACCEPTED: { name: string; algorithm: string; pem: string }[] = [
  {
    name: "p256",
    algorithm: "ECDSA_P256",
    pem: spki(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey),
  },
  {
    name: "p384",
    algorithm: "ECDSA_P384",
    pem: spki(generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey),
  },
  { name: "ed25519", algorithm: "ED25519", pem: spki(generateKeyPairSync("ed25519").publicKey) },
  {
    name: "rsa2048",
    algorithm: "RSA_2048",
    pem: spki(generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey),
  },
  {
    name: "rsa3072",
    algorithm: "RSA_3072",
    pem: spki(generateKeyPairSync("rsa", { modulusLength: 3072 }).publicKey),
  },
];

// Made before any server runs: a 4096-bit key takes seconds, which must not stall a test's server.
const rsa4096 = spki(generateKeyPairSync("rsa", { modulusLength: 4096 }).publicKey);
/** Public keys of kinds or sizes that are refused, and what the refusal says. */
const REFUSED_PUBLIC_KEYS: [string, RegExp][] = [
  [spki(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey), /RSA key of 1024 bits/],
  [spki(generateKeyPairSync("ec", { namedCurve: "P-521" }).publicKey), /curve secp521r1/],
  [spki(generateKeyPairSync("ec", { namedCurve: "secp256k1" }).publicKey), /curve secp256k1/],
  [spki(generateKeyPairSync("x25519").publicKey), /x25519 key/],
  [spki(generateKeyPairSync("ed448").publicKey), /ed448 key/],
  [spki(generateKeyPairSync("dsa", { modulusLength: 2048, divisorLength: 256 }).publicKey), /dsa key/],
  [spki(generateKeyPairSync("rsa-pss", { modulusLength: 2048 }).publicKey), /rsa-pss key/],
];
const ecPair = generateKeyPairSync("ec", { namedCurve: "P-256" });
const rsaPair = generateKeyPairSync("rsa", { modulusLength: 2048 });
/** A private key's base64 body, which no answer, event or log may ever carry. */
const PRIVATE_PKCS8 = ecPair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const PRIVATE_MARKER = PRIVATE_PKCS8.split("\n")[2] as string;

forEachEngine("signing keys: the SigningKey resource over REST and gRPC", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let client: grpc.Client;
  let admin: string;
  let org: string;
  let folder: string;
  let repo: string;
  let orgB: string;
  let ownerB: string;
  let viewer: string;
  let editor: string;

  const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    wharf.api(path, { token: admin, ...init });
  const json = async <T = Json>(
    path: string,
    init: { method?: string; body?: unknown; token?: string } = {},
  ) => expectJson<T>(await api(path, init));
  const createKey = (parent: string, body: Json, token = admin) =>
    api(`/registry/v2/signingKeys/${parent}`, { method: "POST", body, token });

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      config: { eventsAllowLoopback: "true" },
    });
    admin = wharf.adminToken;
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    receiver = await startWebhookReceiver();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    folder = await wharf.create(`/iam/v2/groups/${org}`, { name: "prod" });
    repo = await wharf.create(`/registry/v2/repos/${folder}`, { name: "api" });
    await wharf.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url("/hook") });
    orgB = await wharf.create("/iam/v2/groups", { name: "globex" });
    ownerB = (await personWithRole(wharf, "bob", orgB, "owner")).token;
    viewer = (await personWithRole(wharf, "vic", org, "viewer")).token;
    editor = (await personWithRole(wharf, "eddie", org, "editor")).token;
  });
  after(async () => {
    client?.close();
    await receiver?.close();
    await wharf?.close();
  });

  it("registers every accepted key type at an organization, a folder and a repo, normalised with algorithm and fingerprint", async () => {
    const parents = [org, folder, repo];
    for (const [i, key] of ACCEPTED.entries()) {
      const parent = parents[i % parents.length] as string;
      // CRLF line ends and blank lines around it: the key is stored re-encoded, as one block.
      const sent = `\n\n${key.pem.replace(/\n/g, "\r\n")}\n`;
      const created = await expectJson<ApiKey>(
        await createKey(parent, { name: key.name, publicKeyPem: sent }),
      );
      assert.match(created.uid, new RegExp(`^${parent}/[0-9a-f]{16}$`));
      assert.equal(created.name, key.name);
      assert.equal(created.publicKeyPem, key.pem, `${key.name}: normalised SPKI PEM`);
      assert.equal(created.algorithm, key.algorithm);
      assert.equal(created.fingerprint, fingerprintOf(key.pem));
      assert.match(created.createTime, /^\d{4}-\d\d-\d\dT/);
      assert.deepEqual(await json<ApiKey>(`/registry/v2/signingKeys/${created.uid}`), created);
    }
    const big = await expectJson<ApiKey>(await createKey(org, { name: "rsa4096", publicKeyPem: rsa4096 }));
    assert.equal(big.algorithm, "RSA_4096");
    // A key in cosign.pub's shape (cosign generate-key-pair writes a P-256 SPKI "PUBLIC KEY" block).
    const stored = await wharf.store.trustedKeys.get(big.uid);
    assert.equal(stored?.publicKeyPem, rsa4096);
  });

  it("lists with filters, order, paging and totalCount over REST, and over gRPC for a viewer", async () => {
    const ofOrg = await json<{ signingKeys: ApiKey[]; totalCount: string }>(
      `/registry/v2/signingKeys?uidp.children_of=${org}&order_by=name`,
    );
    assert.deepEqual(
      ofOrg.signingKeys.map((k) => k.name),
      ["p256", "rsa2048", "rsa4096"],
    );
    assert.equal(ofOrg.totalCount, "3");
    const all = await json<{ signingKeys: ApiKey[]; totalCount: string }>(
      `/registry/v2/signingKeys?uidp.descendants_of=${org}&order_by=name desc&page_size=2`,
    );
    assert.equal(all.totalCount, "6");
    assert.deepEqual(
      all.signingKeys.map((k) => k.name),
      ["rsa4096", "rsa3072"],
    );
    const ofRepo = await json<{ signingKeys: ApiKey[] }>(`/registry/v2/signingKeys?uidp.children_of=${repo}`);
    assert.deepEqual(
      ofRepo.signingKeys.map((k) => k.name),
      ["ed25519"],
    );
    await expectError(await api("/registry/v2/signingKeys?order_by=update_time"), { status: 400, code: 3 });

    const listed = await grpcCall(
      client,
      "/platform.registry.v2.SigningKeysService/ListSigningKeys",
      { input: sk.ListSigningKeysRequestSchema, output: sk.ListSigningKeysResponseSchema },
      create(sk.ListSigningKeysRequestSchema, { uidp: { childrenOf: folder }, orderBy: "name" }),
      viewer,
    );
    assert.equal(listed.error, undefined, listed.error?.details);
    assert.deepEqual(
      listed.response?.signingKeys.map((k) => [k.name, k.algorithm]),
      [
        ["p384", "ECDSA_P384"],
        ["rsa3072", "RSA_3072"],
      ],
    );
  });

  it("creates, reads and deletes over gRPC; a duplicate name is ALREADY_EXISTS", async () => {
    const call = <
      I extends Parameters<typeof grpcCall>[2]["input"],
      O extends Parameters<typeof grpcCall>[2]["output"],
    >(
      method: string,
      schemas: { input: I; output: O },
      request: Parameters<typeof grpcCall<I, O>>[3],
    ) => grpcCall(client, `/platform.registry.v2.SigningKeysService/${method}`, schemas, request, admin);
    const pem = ACCEPTED[2]?.pem as string;
    const made = await call(
      "CreateSigningKey",
      { input: sk.CreateSigningKeyRequestSchema, output: sk.SigningKeySchema },
      create(sk.CreateSigningKeyRequestSchema, {
        parent: repo,
        signingKey: { name: "grpc", publicKeyPem: pem },
      }),
    );
    assert.equal(made.error, undefined, made.error?.details);
    assert.equal(made.response?.algorithm, "ED25519");
    assert.equal(made.response?.fingerprint, fingerprintOf(pem));
    const uid = made.response?.uid as string;

    const duplicate = await call(
      "CreateSigningKey",
      { input: sk.CreateSigningKeyRequestSchema, output: sk.SigningKeySchema },
      create(sk.CreateSigningKeyRequestSchema, {
        parent: repo,
        signingKey: { name: "grpc", publicKeyPem: pem },
      }),
    );
    assert.equal(duplicate.error?.code, grpc.status.ALREADY_EXISTS);
    const refused = await call(
      "CreateSigningKey",
      { input: sk.CreateSigningKeyRequestSchema, output: sk.SigningKeySchema },
      create(sk.CreateSigningKeyRequestSchema, {
        parent: repo,
        signingKey: { name: "bad", publicKeyPem: PRIVATE_PKCS8 },
      }),
    );
    assert.equal(refused.error?.code, grpc.status.INVALID_ARGUMENT);

    const got = await call(
      "GetSigningKey",
      { input: sk.GetSigningKeyRequestSchema, output: sk.SigningKeySchema },
      create(sk.GetSigningKeyRequestSchema, { uid }),
    );
    assert.equal(got.response?.name, "grpc");
    const deleted = await call(
      "DeleteSigningKey",
      { input: sk.DeleteSigningKeyRequestSchema, output: sk.DeleteSigningKeyRequestSchema },
      create(sk.DeleteSigningKeyRequestSchema, { uid }),
    );
    assert.equal(deleted.error, undefined, deleted.error?.details);
    const gone = await call(
      "GetSigningKey",
      { input: sk.GetSigningKeyRequestSchema, output: sk.SigningKeySchema },
      create(sk.GetSigningKeyRequestSchema, { uid }),
    );
    assert.equal(gone.error?.code, grpc.status.NOT_FOUND);
    const again = await call(
      "DeleteSigningKey",
      { input: sk.DeleteSigningKeyRequestSchema, output: sk.DeleteSigningKeyRequestSchema },
      create(sk.DeleteSigningKeyRequestSchema, { uid }),
    );
    assert.equal(again.error?.code, grpc.status.NOT_FOUND);
  });

  it("refuses every bad key with INVALID_ARGUMENT naming publicKeyPem, never echoing a private key", async () => {
    const bad = async (publicKeyPem: unknown, pattern: RegExp) => {
      const error = await expectError(await createKey(org, { name: "bad", publicKeyPem }), {
        status: 400,
        code: 3,
        field: "publicKeyPem",
      });
      assert.match(error.message, pattern);
      assert.ok(!JSON.stringify(error).includes(PRIVATE_MARKER), "no error repeats the private key");
    };
    const p256 = ACCEPTED[0]?.pem as string;
    const pemOf = (label: string, der: Buffer) =>
      `-----BEGIN ${label}-----\n${der.toString("base64").replace(/.{64}/g, "$&\n")}\n-----END ${label}-----\n`;

    await bad(undefined, /is required/);
    await bad("   \n", /is required/);
    await bad("hello, I am a key", /is not PEM/);
    await bad(p256.replace("-----END PUBLIC KEY-----", ""), /is not PEM/);
    await bad(`${p256}${ACCEPTED[2]?.pem}`, /exactly one PEM block, not 2/);
    await bad(`my key:\n${p256}`, /only the PEM block/);
    await bad("-----BEGIN PUBLIC KEY-----\n!!!not base64!!!\n-----END PUBLIC KEY-----\n", /not base64/);
    await bad(pemOf("PUBLIC KEY", Buffer.from("definitely not DER")), /does not parse/);
    await bad(`${p256.slice(0, 60)}A${p256.slice(61)}`, /does not parse|not base64/);
    await bad(`${p256}${" ".repeat(17 * 1024)}`, /at most 16384 bytes/);
    // Private keys, in every encoding: never parsed, never derived from, never stored.
    await bad(PRIVATE_PKCS8, /is a private key/);
    await bad(ecPair.privateKey.export({ type: "sec1", format: "pem" }).toString(), /is a private key/);
    await bad(rsaPair.privateKey.export({ type: "pkcs1", format: "pem" }).toString(), /is a private key/);
    await bad(
      ecPair.privateKey
        .export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "pw" })
        .toString(),
      /is a private key/,
    );
    // cosign.key's own label.
    await bad(pemOf("ENCRYPTED SIGSTORE PRIVATE KEY", Buffer.from("{}")), /is a private key/);
    await bad(`${p256}${PRIVATE_PKCS8}`, /is a private key/);
    // Weak or unsupported keys.
    for (const [pem, pattern] of REFUSED_PUBLIC_KEYS) await bad(pem, pattern);
    await bad(rsaPair.publicKey.export({ type: "pkcs1", format: "pem" }).toString(), /not RSA PUBLIC KEY/);
    await bad(readFileSync("test/fixtures/signing-keys/cert.pem", "utf8"), /is a certificate/);

    // The name, the parent.
    await expectError(await createKey(org, { name: "Bad Name", publicKeyPem: p256 }), {
      status: 400,
      code: 3,
      field: "name",
    });
    await expectError(await createKey(org, { publicKeyPem: p256 }), { status: 400, code: 3, field: "name" });
    await expectError(await createKey(`${org}/0000000000000000`, { name: "x", publicKeyPem: p256 }), {
      status: 404,
      code: 5,
    });
    await expectError(await createKey(org, { name: "p256", publicKeyPem: p256 }), { status: 409, code: 6 });
    const names = (
      await wharf.store.trustedKeys.list(
        { uidp: { descendantsOf: org } },
        { order: { field: "uid", desc: false }, limit: 100, skip: 0 },
      )
    ).rows.map((r) => r.name);
    assert.ok(!names.includes("bad") && !names.includes("x"), "nothing was created");
    assert.ok(
      !JSON.stringify(wharf.logLines).includes(PRIVATE_MARKER),
      "no log line carries the private key",
    );
  });

  it("keeps other organizations out; A's viewer and editor read but do not write", async () => {
    const p256 = ACCEPTED[0]?.pem as string;
    const key = (
      await wharf.store.trustedKeys.list(
        { uidp: { childrenOf: org } },
        { order: { field: "name", desc: false }, limit: 1, skip: 0 },
      )
    ).rows[0]?.uid as string;
    const listed = await json<{ signingKeys?: ApiKey[] }>("/registry/v2/signingKeys", { token: ownerB });
    assert.deepEqual(listed.signingKeys ?? [], []);
    await expectError(await api(`/registry/v2/signingKeys/${key}`, { token: ownerB }), {
      status: 403,
      code: 7,
    });
    await expectError(await api(`/registry/v2/signingKeys/${key}`, { method: "DELETE", token: ownerB }), {
      status: 403,
      code: 7,
    });
    await expectError(await createKey(repo, { name: "intruder", publicKeyPem: p256 }, ownerB), {
      status: 403,
      code: 7,
    });
    await expectJson(await createKey(orgB, { name: "theirs", publicKeyPem: p256 }, ownerB));

    const seen = await json<{ signingKeys: ApiKey[] }>("/registry/v2/signingKeys", { token: viewer });
    assert.ok(seen.signingKeys.length > 0);
    assert.ok(seen.signingKeys.every((k) => k.uid.startsWith(`${org}/`)));
    assert.equal((await json<ApiKey>(`/registry/v2/signingKeys/${key}`, { token: editor })).uid, key);
    for (const token of [viewer, editor]) {
      await expectError(await createKey(org, { name: "nope", publicKeyPem: p256 }, token), {
        status: 403,
        code: 7,
      });
      await expectError(await api(`/registry/v2/signingKeys/${key}`, { method: "DELETE", token }), {
        status: 403,
        code: 7,
      });
    }
    await expectError(
      await api(`/registry/v2/signingKeys/${key}`, { token: undefined as unknown as string }),
      {
        status: 401,
        code: 16,
      },
    );
  });

  it("deletes a repo's keys with the repo", async () => {
    const doomed = await wharf.create(`/registry/v2/repos/${folder}`, { name: "doomed" });
    const key = await wharf.create(`/registry/v2/signingKeys/${doomed}`, {
      name: "k",
      publicKeyPem: ACCEPTED[1]?.pem,
    });
    await json(`/registry/v2/repos/${doomed}`, { method: "DELETE" });
    assert.equal(await wharf.store.trustedKeys.get(key), undefined);
    await expectError(await api(`/registry/v2/signingKeys/${key}`), { status: 404, code: 5 });
  });

  it("records signing_key.created/deleted events and audit records", async () => {
    const made = await json<ApiKey>(`/registry/v2/signingKeys/${folder}`, {
      method: "POST",
      body: { name: "evented", publicKeyPem: ACCEPTED[0]?.pem },
    });
    await json(`/registry/v2/signingKeys/${made.uid}`, { method: "DELETE" });
    const about = (all: ReceivedDelivery[]) => all.filter((d) => d.headers["ce-subject"] === made.uid);
    const delivered = await receiver.waitFor((all) => about(all).length === 2);
    assert.deepEqual(
      about(delivered).map((d) => String(d.headers["ce-type"])),
      ["dev.wharf.api.registry.signing_key.created.v1", "dev.wharf.api.registry.signing_key.deleted.v1"],
    );
    const [createdEvent, deletedEvent] = about(delivered).map(
      (d) => (JSON.parse(d.body) as { body?: Json }).body,
    );
    assert.equal(createdEvent?.name, "evented");
    assert.equal(createdEvent?.fingerprint, made.fingerprint);
    assert.equal(createdEvent?.publicKeyPem, made.publicKeyPem);
    assert.deepEqual(deletedEvent, { uid: made.uid });

    const audit = await json<{ records: { action: string; resource: string }[] }>(
      "/audit/v2/records?page_size=1000",
    );
    assert.deepEqual(
      audit.records
        .filter((r) => r.resource === made.uid)
        .map((r) => r.action)
        .sort(),
      [
        "platform.registry.v2.SigningKeysService/CreateSigningKey",
        "platform.registry.v2.SigningKeysService/DeleteSigningKey",
      ],
    );
  });
});
