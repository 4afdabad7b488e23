/**
 * Wharf's side of a replication, in process, for the copier's tests: the registry's content,
 * uploads and push-time repo creation over a store and a blob driver, with events recorded for
 * real (the outbox) and also captured for assertions, and a helper that pushes built manifests
 * the way the registry's PUT does.
 */
import { Readable } from "node:stream";
import type { DescMessage } from "@bufbuild/protobuf";
import { type Clock, systemClock } from "../../src/core/clock.js";
import type {
  ApiChange,
  ChangeContext,
  EventRecorder,
  RegistryChange,
} from "../../src/events/event-recorder.js";
import { createEventRecorder } from "../../src/events/event-recorder.js";
import { createBlobUploads } from "../../src/registry/data-plane/blob-uploads.js";
import { createRegistryContent } from "../../src/registry/data-plane/registry-content.js";
import { createRepoResolver } from "../../src/registry/data-plane/repo-resolver.js";
import { parseDigest } from "../../src/registry/digest.js";
import { parseManifest } from "../../src/registry/manifest-parser.js";
import type { LocalEndpointDeps } from "../../src/registry/replication/local-endpoint.js";
import type {
  ReplicationCounters,
  ReplicationFailure,
  ReplicationProgress,
} from "../../src/registry/replication/replication-contract.js";
import type { BlobDriver } from "../../src/storage/blobs/blob-driver.js";
import type { GroupRow } from "../../src/storage/iam-store.js";
import type { Store } from "../../src/storage/store.js";
import { groupRow } from "../conformance/store/fixtures.js";
import type { BuiltManifest } from "./replication-images.js";

/** An API change as captured: what, and who did it. */
export interface CapturedChange {
  resource: string;
  verb: string;
  subject: string;
  actor: string | undefined;
}

/** Wharf's side of a replication test. */
export interface LocalWharf extends LocalEndpointDeps {
  blobs: BlobDriver;
  /** Registry events (pushes) recorded, in order. */
  pushes: RegistryChange[];
  /** API changes (repo.created, group.created…) recorded, in order. */
  changes: CapturedChange[];
  /** Creates organization `name` (a root group). */
  organization(name: string): Promise<GroupRow>;
  /** Pushes `m` (its blobs, its children by digest, then it) to `name` under `reference`. */
  push(name: string, reference: string, m: BuiltManifest): Promise<void>;
}

/** A LocalWharf over `store` and `blobs`. */
export function localWharf(store: Store, blobs: BlobDriver, clock: Clock = systemClock): LocalWharf {
  const recorder = createEventRecorder({ apiUrl: "http://api.test", registryUrl: "http://registry.test" });
  const pushes: RegistryChange[] = [];
  const changes: CapturedChange[] = [];
  // Captured only once the write's transaction commits (a rolled-back push records nothing).
  const events: EventRecorder = {
    async change<D extends DescMessage>(tx: Store, ctx: ChangeContext, change: ApiChange<D>) {
      await recorder.change(tx, ctx, change);
      changes.push({
        resource: change.resource,
        verb: change.verb,
        subject: change.subject,
        actor: ctx.principal?.identityUid,
      });
    },
    async registry(tx, change) {
      await recorder.registry(tx, change);
      pushes.push(change);
    },
  };
  const content = createRegistryContent({ store, blobs, clock, events });
  const uploads = createBlobUploads({ store, blobs, clock, events });
  const resolver = createRepoResolver({ store, clock, events, ttlMs: 0 });

  async function push(name: string, reference: string, m: BuiltManifest): Promise<void> {
    const repo = await resolver.ensureRepo(await resolver.resolve(name), undefined);
    for (const child of m.children) await push(name, child.digest, child);
    for (const [digest, bytes] of m.blobs) {
      await uploads.putMonolithic(repo.uid, parseDigest(digest), Readable.from([bytes]), bytes.length);
    }
    await content.pushManifest({
      repo,
      name,
      digest: m.digest,
      content: m.manifest,
      parsed: parseManifest(m.manifest, m.mediaType),
      ...(reference.startsWith("sha256:") ? {} : { tag: reference }),
      now: clock.now(),
    });
  }

  return {
    ...{ store, blobs, clock, events, content, uploads, resolver },
    pushes,
    changes,
    async organization(name) {
      const org = groupRow("", name);
      await store.groups.insert(org);
      return org;
    },
    push,
  };
}

/** A progress sink that keeps a run's counters and failures, for tests to assert on. */
export function progressSink(): ReplicationProgress & {
  counters: ReplicationCounters;
  failures: ReplicationFailure[];
} {
  const counters: ReplicationCounters = {
    copiedManifests: 0,
    copiedBlobs: 0,
    copiedBytes: 0,
    skippedBlobs: 0,
  };
  const failures: ReplicationFailure[] = [];
  return {
    counters,
    failures,
    add(delta) {
      for (const [k, v] of Object.entries(delta)) counters[k as keyof ReplicationCounters] += v ?? 0;
    },
    failed(f) {
      failures.push(f);
    },
  };
}
