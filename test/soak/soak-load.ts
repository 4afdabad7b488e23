import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";
import { GetRepoRequestSchema, RepoSchema } from "../../src/gen/platform/registry/v2/repos_pb.js";
import { grpcCall } from "../support/grpc-call.js";
import { buildImage, OCI_MANIFEST } from "../support/registry-push.js";
import { runSkopeo } from "../support/skopeo.js";
import { type SoakClient, SoakRequestError, sha256Of } from "./soak-client.js";

/** The kinds of operation the soak mixes, with their weights in the mix. */
export const OP_WEIGHTS = {
  "push-http-monolithic": 3,
  "push-http-chunked": 2,
  "push-skopeo": 1,
  "pull-by-tag": 6,
  "pull-by-digest": 6,
  "tag-history": 3,
  "api-write": 3,
  "api-list": 3,
  "api-grpc-get": 2,
} as const;

/** One kind of operation. */
export type OpKind = keyof typeof OP_WEIGHTS;

/** One finished operation: when, how long, and how it failed if it did. */
export interface OpRecord {
  kind: OpKind;
  start: number;
  end: number;
  ok: boolean;
  /** For a failure: the failing request's `x-soak-id` ("" for skopeo), its status (0: no answer) and message. */
  failure?: { requestId: string; status: number; message: string };
}

/** A push the registry acknowledged (the manifest PUT answered 201, or skopeo exited 0). */
export interface AckPush {
  repo: string;
  tag: string;
  digest: string;
  /** Every blob of the image: digest → size. */
  blobs: Map<string, number>;
  /** A registry/client-side time just after the acknowledgement. */
  ackAt: number;
}

/** An API change the API acknowledged, and the event type it must have produced for `subject`. */
export interface AckChange {
  type: string;
  subject: string;
}

/** What the load did and what it was told was stored. */
export interface SoakWorld {
  org: { name: string; uid: string };
  /** The registry host (HAProxy's front) for skopeo, e.g. `127.0.0.1:5000`. */
  registryHost: string;
  registryToken: () => string;
  /** Pre-built OCI layouts skopeo pushes from: `oci:<dir>:<tag>`, with their manifest digests. */
  skopeoSources: { ref: string; digest: string; blobs: Map<string, number> }[];
  pushes: AckPush[];
  changes: AckChange[];
  apiRepos: string[];
  records: OpRecord[];
}

const REPOS = ["app0", "app1", "app2", "app3"];
let counter = 0;

function pick<T>(items: readonly T[]): T | undefined {
  return items[Math.floor(Math.random() * items.length)];
}

/** Picks an operation kind by weight. */
export function pickKind(): OpKind {
  const entries = Object.entries(OP_WEIGHTS) as [OpKind, number][];
  let roll = Math.random() * entries.reduce((sum, [, w]) => sum + w, 0);
  for (const [kind, weight] of entries) {
    roll -= weight;
    if (roll < 0) return kind;
  }
  return "api-list";
}

/** Runs one operation of `kind` and records it; never throws. */
export async function runOp(kind: OpKind, world: SoakWorld, clients: SoakClients): Promise<void> {
  const id = `${kind}-${++counter}-${randomBytes(3).toString("hex")}`;
  const start = Date.now();
  try {
    await OPS[kind](id, world, clients);
    world.records.push({ kind, start, end: Date.now(), ok: true });
  } catch (err) {
    const failure =
      err instanceof SoakRequestError
        ? { requestId: err.requestId, status: err.status, message: err.message }
        : { requestId: "", status: 0, message: err instanceof Error ? err.message : String(err) };
    world.records.push({ kind, start, end: Date.now(), ok: false, failure });
  }
}

/** The clients an operation uses: REST/OCI over HTTP/1.1, and gRPC (grpc-js) to the API front. */
export interface SoakClients {
  api: SoakClient;
  registry: SoakClient;
  grpc: { client: grpc.Client; token: () => string };
}

type Op = (id: string, world: SoakWorld, clients: SoakClients) => Promise<void>;

const OPS: Record<OpKind, Op> = {
  async "push-http-monolithic"(id, world, { registry }) {
    const image = buildImage(id, [`layer ${id} ${randomBytes(4096).toString("base64")}`]);
    const repo = `${world.org.name}/${pick(REPOS)}`;
    for (const [digest, bytes] of image.blobs) {
      await registry.request(id, `/v2/${repo}/blobs/uploads/?digest=${digest}`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream" },
        body: bytes,
        expect: [201],
      });
    }
    await putManifest(id, world, registry, repo, image.manifest, image.digest, sizes(image.blobs));
  },

  async "push-http-chunked"(id, world, { registry }) {
    // A 1–3 MiB layer in 256 KiB PATCHes: the chunks of one upload land on different replicas.
    const layer = randomBytes((1 + Math.floor(Math.random() * 3)) * 1024 * 1024);
    const image = buildImage(id, [layer.toString("latin1")]);
    const repo = `${world.org.name}/${pick(REPOS)}`;
    for (const [digest, bytes] of image.blobs) {
      const started = await registry.request(id, `/v2/${repo}/blobs/uploads/`, {
        method: "POST",
        expect: [202],
      });
      let location = started.headers.get("location") ?? "";
      const chunk = 256 * 1024;
      for (let at = 0; at < bytes.length; at += chunk) {
        const part = bytes.subarray(at, Math.min(at + chunk, bytes.length));
        const patched = await registry.request(id, location, {
          method: "PATCH",
          headers: {
            "content-type": "application/octet-stream",
            "content-range": `${at}-${at + part.length - 1}`,
          },
          body: part,
          expect: [202],
        });
        location = patched.headers.get("location") ?? location;
      }
      const separator = location.includes("?") ? "&" : "?";
      await registry.request(id, `${location}${separator}digest=${digest}`, { method: "PUT", expect: [201] });
    }
    await putManifest(id, world, registry, repo, image.manifest, image.digest, sizes(image.blobs));
  },

  async "push-skopeo"(id, world) {
    const source = pick(world.skopeoSources);
    if (!source) return;
    const repo = `${world.org.name}/sk${Math.floor(Math.random() * 2)}`;
    const tag = `s${++counter}`;
    const result = await runSkopeo(
      [
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        `_token:${world.registryToken()}`,
        source.ref,
        `docker://${world.registryHost}/${repo}:${tag}`,
      ],
      { timeoutMs: 120_000 },
    );
    if (result.code !== 0) throw new Error(`skopeo copy exited ${result.code}: ${result.stderr.slice(-300)}`);
    world.pushes.push({ repo, tag, digest: source.digest, blobs: source.blobs, ackAt: Date.now() });
    void id;
  },

  async "pull-by-tag"(id, world, { registry }) {
    const push = pick(world.pushes);
    if (!push) return;
    const res = await registry.request(id, `/v2/${push.repo}/manifests/${push.tag}`, {
      headers: { accept: OCI_MANIFEST },
      expect: [200],
    });
    if (sha256Of(res.body) !== push.digest) throw new Error(`${push.repo}:${push.tag} answered other bytes`);
  },

  async "pull-by-digest"(id, world, { registry }) {
    const push = pick(world.pushes);
    if (!push) return;
    const res = await registry.request(id, `/v2/${push.repo}/manifests/${push.digest}`, {
      headers: { accept: OCI_MANIFEST },
      expect: [200],
    });
    if (sha256Of(res.body) !== push.digest)
      throw new Error(`${push.repo}@${push.digest} answered other bytes`);
    const blob = pick([...push.blobs.keys()]);
    if (!blob) return;
    const got = await registry.request(id, `/v2/${push.repo}/blobs/${blob}`, { expect: [200] });
    if (sha256Of(got.body) !== blob) throw new Error(`blob ${blob} of ${push.repo} answered other bytes`);
  },

  async "tag-history"(id, world, { registry }) {
    const push = pick(world.pushes);
    if (!push) return;
    const res = await registry.request(id, `/v2/${push.repo}/_service/history/${push.tag}`, {
      expect: [200],
    });
    const history = JSON.parse(res.body.toString()) as { history: { digest: string }[] };
    if (!history.history.some((h) => h.digest === push.digest)) {
      throw new Error(`history of ${push.repo}:${push.tag} lacks ${push.digest}`);
    }
  },

  async "api-write"(id, world, { api }) {
    const existing = pick(world.apiRepos);
    if (existing !== undefined && Math.random() < 0.5) {
      await api.request(id, `/registry/v2/repos/${existing}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ description: `soak ${id}` }),
        expect: [200],
      });
      world.changes.push({ type: "dev.wharf.api.registry.repo.updated.v1", subject: existing });
      return;
    }
    const res = await api.request(id, `/registry/v2/repos/${world.org.uid}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: `api-${counter}-${randomBytes(2).toString("hex")}` }),
      expect: [200],
    });
    const uid = (JSON.parse(res.body.toString()) as { uid: string }).uid;
    world.apiRepos.push(uid);
    world.changes.push({ type: "dev.wharf.api.registry.repo.created.v1", subject: uid });
  },

  async "api-grpc-get"(id, world, { grpc: { client, token } }) {
    const uid = pick(world.apiRepos);
    if (uid === undefined) return;
    const requestId = `${id}.1`;
    const { response, error } = await grpcCall(
      client,
      "/platform.registry.v2.ReposService/GetRepo",
      { input: GetRepoRequestSchema, output: RepoSchema },
      create(GetRepoRequestSchema, { uid }),
      token(),
      { deadline: Date.now() + 60_000, metadata: { "x-soak-id": requestId } },
    );
    if (error) throw new SoakRequestError(requestId, 0, `gRPC ${error.code}: ${error.details}`);
    if (response?.uid !== uid) throw new Error(`GetRepo ${uid} answered ${response?.uid}`);
  },

  async "api-list"(id, world, { api }) {
    const res = await api.request(
      id,
      `/registry/v2/repos?uidp.descendants_of=${world.org.uid}&page_size=100`,
      {
        expect: [200],
      },
    );
    // An empty page omits `repos` (proto3 JSON leaves out empty lists).
    const body = JSON.parse(res.body.toString()) as { repos?: unknown[] };
    if (body.repos !== undefined && !Array.isArray(body.repos))
      throw new Error("repo list whose repos is no list");
  },
};

async function putManifest(
  id: string,
  world: SoakWorld,
  registry: SoakClient,
  repo: string,
  manifest: Buffer,
  digest: string,
  blobs: Map<string, number>,
): Promise<void> {
  const tag = `p${++counter}`;
  const res = await registry.request(id, `/v2/${repo}/manifests/${tag}`, {
    method: "PUT",
    headers: { "content-type": OCI_MANIFEST },
    body: manifest,
    expect: [201],
  });
  const answered = res.headers.get("docker-content-digest");
  if (answered !== digest) throw new Error(`manifest PUT answered digest ${answered}, expected ${digest}`);
  world.pushes.push({ repo, tag, digest, blobs, ackAt: Date.now() });
}

function sizes(blobs: Map<string, Buffer>): Map<string, number> {
  return new Map([...blobs].map(([digest, bytes]) => [digest, bytes.length]));
}
