// The operations `npm run bench:scale` times on a seeded deployment, each through the real Store
// (and the registry's content layer for manifest GET), as the services call them.

import { systemClock } from "../../src/core/clock.js";
import type { ListWindow } from "../../src/core/list.js";
import { createEventRecorder } from "../../src/events/event-recorder.js";
import { collectGarbage, GARBAGE_PHASES } from "../../src/registry/data-plane/garbage-collector.js";
import { createRegistryContent } from "../../src/registry/data-plane/registry-content.js";
import { HISTORY_PAGE_SIZE, tagHistoryPage } from "../../src/registry/tag-history.js";
import { createMemoryBlobDriver } from "../../src/storage/blobs/memory/memory-blob-driver.js";
import type { Store } from "../../src/storage/store.js";
import { type Figure, measure, randomIndexes } from "./measure.js";
import { manifestDigest, repoOf, type ScaleSizes, SEED_ORG, tagOf } from "./seed.js";

/** Rows of a ListTags page (the API's default page size). */
export const PAGE_SIZE = 50;
/** The deep ListTags page (1-based); a smaller deployment uses its last page. */
export const DEEP_PAGE = 1000;

const ALL_TAGS = { uidp: { descendantsOf: SEED_ORG } };
const firstWindow = (): ListWindow => ({ order: { field: "uid", desc: false }, limit: PAGE_SIZE, skip: 0 });

/** The window of 1-based page `page` of ListTags over every tag, found by walking pages like a client. */
export async function tagPageWindow(store: Store, page: number): Promise<ListWindow> {
  let window = firstWindow();
  for (let p = 1; p < page; p++) {
    const { rows } = await store.tags.list(ALL_TAGS, window);
    const last = rows[Math.min(rows.length, PAGE_SIZE) - 1];
    if (last === undefined || rows.length <= PAGE_SIZE) return window;
    window = { ...window, after: { value: last.uid, uid: last.uid } };
  }
  return window;
}

/** Every history record of the hot tag, walked in HISTORY_PAGE_SIZE pages by moving `start`. */
export async function walkHotHistory(store: Store): Promise<number> {
  const hot = tagOf(0, { repos: 1 });
  const repoUid = repoOf(0).uid;
  let start: number | undefined;
  let total = 0;
  for (;;) {
    const rows = await tagHistoryPage(store, { repoUid, tagName: hot.name, start });
    total += rows.length;
    const last = rows.at(-1);
    if (rows.length < HISTORY_PAGE_SIZE || last === undefined) return total;
    start = last.updateTime + 1;
  }
}

/** One timed figure per operation, plus GC's phases. */
export interface ScaleFigures {
  figures: Record<string, Figure>;
  /** GC dry run: ms spent in each phase (mean of the runs). */
  gcPhases: Record<string, number>;
  deepPage: number;
}

/**
 * Times every operation on `store` (default list-count caching) and `uncounted` (a store with
 * `listCountTtlMs: 0`, so `totalCount` is counted every time). `samples` per read; the full history
 * walk and GC take fewer (samples / 20 and `gcRuns`).
 */
export async function timeOperations(
  stores: { store: Store; uncounted: Store },
  sizes: ScaleSizes,
  samples: number,
  gcRuns: number,
): Promise<ScaleFigures> {
  const { store, uncounted } = stores;
  const pick = randomIndexes(34);
  const figures: Record<string, Figure> = {};
  const content = createRegistryContent({
    store,
    blobs: createMemoryBlobDriver(),
    clock: systemClock,
    events: createEventRecorder({ apiUrl: "http://127.0.0.1/", registryUrl: "http://127.0.0.1/" }),
  });
  const pages = Math.ceil(sizes.tags / PAGE_SIZE);
  const deepPage = Math.min(DEEP_PAGE, pages);
  const deep = await tagPageWindow(store, deepPage);
  const second = await tagPageWindow(store, 2);
  const hotRepo = repoOf(0).uid;

  figures.GetRepo = await measure(async () => {
    if (!(await store.repos.get(repoOf(pick(sizes.repos)).uid))) throw new Error("GetRepo: no repo");
  }, samples);
  figures["ListTags first page"] = await measure(() => store.tags.list(ALL_TAGS, firstWindow()), samples);
  figures["ListTags deep page"] = await measure(() => store.tags.list(ALL_TAGS, deep), samples);
  figures["tag history, one page"] = await measure(
    () => tagHistoryPage(store, { repoUid: hotRepo, tagName: "1.0" }),
    samples,
  );
  // An ordinary tag (tag 1: about history / tags records at every scale), the index's own cost.
  const ordinary = tagOf(1, sizes);
  figures["tag history, one page of an ordinary tag"] = await measure(
    () => tagHistoryPage(store, { repoUid: ordinary.repoUid, tagName: ordinary.name }),
    samples,
  );
  figures["tag history, full walk"] = await measure(
    () => walkHotHistory(store),
    Math.max(5, Math.floor(samples / 20)),
    1,
  );
  figures["manifest GET by tag"] = await measure(async () => {
    const tag = tagOf(pick(sizes.tags), sizes);
    const digest = await content.tagDigest(tag.repoUid, tag.name);
    if (digest === undefined || (await content.manifest(tag.repoUid, digest)) === undefined)
      throw new Error(`manifest GET: ${tag.repoUid}:${tag.name} did not resolve`);
  }, samples);
  figures["ListEolTags first page"] = await measure(() => store.eol.listTags({}, firstWindow()), samples);
  figures["ListTags page 2, totalCount cached (1 s)"] = await measure(
    () => store.tags.list(ALL_TAGS, second),
    samples,
  );
  // A tag push in this process between reads: every write to tags invalidates cached counts.
  let pushes = 0;
  figures["ListTags page 2, totalCount after a tag push"] = await measure(
    () => store.tags.list(ALL_TAGS, second),
    samples,
    undefined,
    () => {
      const name = `pushed-${++pushes}`;
      const repoUid = repoOf(pushes % sizes.repos).uid;
      return store.tags.put({
        repoUid,
        name,
        digest: manifestDigest(0),
        deprecated: false,
        newUid: `${repoUid}/p${String(pushes).padStart(8, "0")}`,
        now: Date.now(),
      });
    },
  );
  figures["ListTags page 2, totalCount counted"] = await measure(
    () => uncounted.tags.list(ALL_TAGS, second),
    samples,
  );
  const eolFirst = await uncounted.eol.listTags({}, firstWindow());
  const eolLast = eolFirst.rows[PAGE_SIZE - 1];
  const eolSecond: ListWindow =
    eolLast === undefined
      ? firstWindow()
      : { ...firstWindow(), after: { value: eolLast.uid, uid: eolLast.uid } };
  figures["ListEolTags page 2, totalCount counted"] = await measure(
    () => uncounted.eol.listTags({}, eolSecond),
    samples,
  );

  const gcPhases: Record<string, number> = {};
  figures["gc --dry-run"] = await measure(
    async () => {
      let phase: string | undefined;
      let t0 = performance.now();
      const close = () => {
        if (phase !== undefined) gcPhases[phase] = (gcPhases[phase] ?? 0) + (performance.now() - t0) / gcRuns;
      };
      await collectGarbage(
        { store, blobs: createMemoryBlobDriver(), clock: systemClock },
        {
          dryRun: true,
          onProgress: (p) => {
            if (p.phase === phase) return;
            close();
            phase = p.phase;
            t0 = performance.now();
          },
        },
      );
      close();
    },
    gcRuns,
    0,
  );
  for (const name of GARBAGE_PHASES) gcPhases[name] ??= 0;
  return { figures, gcPhases, deepPage };
}
