import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import { Registry } from "../../../gen/platform/registry/v1/registry_pb.js";
import { RepoSchema } from "../../../gen/platform/registry/v2/repos_pb.js";
import { TagSchema } from "../../../gen/platform/registry/v2/tags_pb.js";
import { formatBytes } from "../../../sdk/byte-size.js";
import { WharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import type { TagHistoryRecord } from "../../../sdk/registry.js";
import { REGISTRY_SERVICES } from "../../../sdk/services/registry.js";
import type { CommandContext } from "../context.js";
import { timeCell, UsageError, type View } from "../output.js";
import { type Bind, type BindFor, print, subcommand } from "../program.js";
import { fetchManifest, fetchReferrers, type Manifest } from "../registry-calls.js";
import { groupUid, type ImageReference, isUid, parseImage, resolveRepo, resolveTag } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";
import { optionalReport } from "../vuln-reports.js";
import {
  countBySeverity,
  countsCell,
  type VulnerabilityChange,
  vulnerabilityChanges,
} from "../vuln-summary.js";
import { registerImmutability } from "./images-immutability.js";
import { registerImagesQuotas } from "./images-quotas.js";
import { registerRetention } from "./images-retention.js";
import { registerImagesSbom } from "./images-sbom.js";
import { registerImagesSearch } from "./images-search.js";
import {
  registerSignatures,
  type Signer,
  signaturesOf,
  signedByCell,
  verifiedSigners,
} from "./images-signatures.js";

const repoView = protoView(RepoSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  field("DESCRIPTION", "description"),
  { header: "UPDATED", cell: (r) => timeCell(r.updateTime) },
]);

const tagView = protoView(TagSchema, [
  field("NAME", "name"),
  field("DIGEST", "digest"),
  { header: "DEPRECATED", cell: (t) => (t.deprecated ? "yes" : "") },
  { header: "UPDATED", cell: (t) => timeCell(t.updateTime) },
]);

/** One line of `images history`: a record with what the image at that digest is. */
export interface HistoryRow {
  time: string;
  digest: string;
  deleted: boolean;
  architectures: string[];
  /** Bytes of the image (the default architecture's, for a multi-architecture image). */
  size: number | undefined;
  /**
   * Distinct vulnerability ids per severity (critical, high, medium, low, unknown; only those that
   * occur) of the digest's current report; absent when it has none (or the caller may not read it).
   */
  vulnerabilities?: Partial<Record<string, number>> | undefined;
}

const historyView: View<HistoryRow> = {
  columns: [
    { header: "TIME", cell: (r) => r.time },
    { header: "DIGEST", cell: (r) => (r.deleted ? "(deleted)" : r.digest) },
    { header: "ARCHITECTURES", cell: (r) => r.architectures.join(", ") },
    { header: "SIZE", cell: (r) => (r.size === undefined ? "" : formatBytes(r.size)) },
    { header: "VULNERABILITIES", cell: (r) => countsCell(r.vulnerabilities) },
  ],
  id: (r) => r.digest,
};

/** What `images describe` shows. */
export interface ImageDescription {
  image: string;
  digest: string;
  architectures: { architecture: string; size: number }[];
  referrers: { digest: string; artifactType: string; mediaType: string }[];
  /** The trusted keys whose signatures of the image verify. */
  signedBy: Signer[];
}

const describeView: View<ImageDescription> = {
  columns: [
    { header: "IMAGE", cell: (d) => d.image },
    { header: "DIGEST", cell: (d) => d.digest },
    {
      header: "ARCHITECTURES",
      cell: (d) => d.architectures.map((a) => `${a.architecture} (${formatBytes(a.size)})`).join("\n"),
    },
    {
      header: "REFERRERS",
      cell: (d) => d.referrers.map((r) => `${r.artifactType || r.mediaType} ${r.digest}`).join("\n"),
    },
    { header: "SIGNED BY", cell: (d) => signedByCell(d.signedBy) },
  ],
  id: (d) => d.digest,
};

/** A layer line of `images diff`. */
export interface LayerChange {
  kind: "layer";
  /** `-` only in the first image, `+` only in the second. */
  change: "-" | "+";
  platform: string;
  digest: string;
  size: number;
}

/** A vulnerability line of `images diff`: an id only one image's report has. */
export type VulnerabilityDiff = VulnerabilityChange & { kind: "vulnerability" };

/** One line of `images diff`. */
export type DiffRow = LayerChange | VulnerabilityDiff;

const diffView: View<DiffRow> = {
  columns: [
    { header: "", cell: (c) => c.change },
    { header: "KIND", cell: (c) => c.kind },
    { header: "PLATFORM", cell: (c) => (c.kind === "layer" ? c.platform : "") },
    { header: "LAYER / VULNERABILITY", cell: (c) => (c.kind === "layer" ? c.digest : c.id) },
    { header: "SIZE / SEVERITY", cell: (c) => (c.kind === "layer" ? formatBytes(c.size) : c.severity) },
  ],
  id: (c) => `${c.change}${c.kind === "layer" ? c.digest : c.id}`,
};

async function collectAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The services `wharf images` calls (only these load: see leanClient). */
const SERVICES = {
  iam: { groups: GroupsService },
  registry: REGISTRY_SERVICES,
  registryV1: { registry: Registry },
};

/** `wharf images …`: repositories, tags, tag history, image descriptions and diffs. */
export function registerImages(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const images = subcommand(program, "images", CLIENT_GROUPS.images);
  registerRepos(images, bind);
  registerTags(images, bind);
  registerRetention(images, bind);
  registerImagesQuotas(images, bind);
  registerImmutability(images, bind);
  registerImagesSbom(images, bind);
  registerImagesSearch(images, bind);
  registerSignatures(images, bind);
  images
    .command("history <image:tag>")
    .description(
      "every digest a tag pointed to: time, digest, architectures, size, vulnerabilities (distinct ids per severity, when the digest has a report)",
    )
    .option("--since <time>", "from this time (RFC 3339)")
    .option("--until <time>", "before this time (RFC 3339)")
    .option("--pin", "print IMAGE@sha256:… of the latest record (or the one --at picks)")
    .option("--at <time>", "with --pin: the digest the tag pointed to at this time")
    .action(
      bind(async (ctx, [ref]: [string], o: { since?: string; until?: string; pin?: boolean; at?: string }) =>
        history(ctx, ref, o),
      ),
    );
  images
    .command("describe <image>")
    .description(
      "an image (ORG/REPO[:TAG|@DIGEST]): architectures, size per architecture, referrers, the trusted keys that signed it",
    )
    .action(bind(async (ctx, [ref]: [string]) => print(ctx, [await describe(ctx, ref)], describeView, true)));
  images
    .command("diff <first> <second>")
    .description(
      "the layers only one of two images has (ORG/REPO@DIGEST or :TAG each), and the vulnerabilities only one has when both have a report",
    )
    .action(bind(async (ctx, [a, b]: [string, string]) => print(ctx, await diff(ctx, a, b), diffView)));
}

function registerRepos(images: Command, bind: Bind): void {
  const repos = images.command("repos").description("repositories");
  repos
    .command("list")
    .description("list repositories")
    .option("--parent <group>", "only those of this organization or folder")
    .option("--name <name>", "only the one with this name")
    .action(
      bind(async (ctx, _args, o: { parent?: string; name?: string }) => {
        const uidp =
          typeof o.parent === "string" ? { descendantsOf: await groupUid(ctx.client, o.parent) } : undefined;
        const request = { ...(uidp ? { uidp } : {}), name: o.name ?? "", orderBy: "name" };
        print(ctx, await collectAll(listAll(ctx.client.registry.repos.listRepos, request)), repoView);
      }),
    );
  repos
    .command("create <org/repo>")
    .description("create a repository (ORG[/FOLDER]/NAME)")
    .option("--description <text>", "what it holds")
    .action(
      bind(async (ctx, [path]: [string], o: { description?: string }) => {
        const slash = path.lastIndexOf("/");
        if (slash <= 0) throw new UsageError(`"${path}" is not ORG/REPO`);
        const parent = await groupUid(ctx.client, path.slice(0, slash));
        const repo = await ctx.client.registry.repos.createRepo({
          parent,
          repo: { name: path.slice(slash + 1), description: o.description ?? "" },
        });
        print(ctx, [repo], repoView, true);
      }),
    );
  repos
    .command("describe <repo>")
    .description("show a repository (ORG/REPO or uid)")
    .action(
      bind(async (ctx, [ref]: [string]) => print(ctx, [await resolveRepo(ctx.client, ref)], repoView, true)),
    );
  repos
    .command("update <repo>")
    .description("change a repository's description")
    .requiredOption("--description <text>", "the new description")
    .action(
      bind(async (ctx, [ref]: [string], o: { description: string }) => {
        const current = await resolveRepo(ctx.client, ref);
        const repo = await ctx.client.registry.repos.updateRepo({
          repo: { uid: current.uid, description: o.description },
          updateMask: { paths: ["description"] },
        });
        print(ctx, [repo], repoView, true);
      }),
    );
  repos
    .command("delete <repo>")
    .description("delete a repository (ORG/REPO or uid)")
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const repo = await resolveRepo(ctx.client, ref);
        await ctx.client.registry.repos.deleteRepo({ uid: repo.uid });
        ctx.stderr.write(`deleted repository ${repo.uid}\n`);
      }),
    );
}

type TagListOptions = {
  deprecated?: boolean;
  includeReferrers?: boolean;
  includeDates?: boolean;
  includeEpochs?: boolean;
};

function registerTags(images: Command, bind: Bind): void {
  const tags = images.command("tags").description("tags of a repository");
  tags
    .command("list <repo>")
    .description("list the tags of a repository (ORG/REPO or uid)")
    .option("--deprecated", "only deprecated tags")
    .option("--include-referrers", "also referrer tags (sha256-…, e.g. cosign's .sig), hidden by default")
    .option("--include-dates", "also date-stamped tags (…-20yymmdd), hidden by default")
    .option("--include-epochs", "also epoch tags (…-r<N>), hidden by default")
    .action(
      bind(async (ctx, [ref]: [string], o: TagListOptions) => {
        const repo = await resolveRepo(ctx.client, ref);
        const all = await collectAll(
          listAll(ctx.client.registry.tags.listTags, {
            uidp: { childrenOf: repo.uid },
            orderBy: "name",
            includeReferrers: o.includeReferrers === true,
            includeDates: o.includeDates === true,
            includeEpochs: o.includeEpochs === true,
          }),
        );
        print(ctx, o.deprecated ? all.filter((t) => t.deprecated) : all, { ...tagView, id: (t) => t.name });
      }),
    );
  tags
    .command("create <image:tag>")
    .description("point a new tag at a digest")
    .requiredOption("--digest <digest>", "the manifest digest (sha256:…)")
    .action(
      bind(async (ctx, [ref]: [string], o: { digest: string }) => {
        const image = requireTag(parseImage(ref));
        const repo = await resolveRepo(ctx.client, image.repository);
        const tag = await ctx.client.registry.tags.createTag({
          parent: repo.uid,
          tag: { name: image.tag, digest: o.digest },
        });
        print(ctx, [tag], tagView, true);
      }),
    );
  tags
    .command("delete <image:tag>")
    .description("delete a tag")
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const image = requireTag(parseImage(ref));
        const repo = await resolveRepo(ctx.client, image.repository);
        const tag = await resolveTag(ctx.client, repo.uid, image.tag);
        await ctx.client.registry.tags.deleteTag({ uid: tag.uid });
        ctx.stderr.write(`deleted tag ${image.repository}:${image.tag}\n`);
      }),
    );
  tags
    .command("restore <image:tag>")
    .description(
      "move a tag back to a digest from its history (ORG/REPO:TAG, or the uid of a deleted tag): --digest, or the one it named --at a time",
    )
    .option("--digest <digest>", "a digest the tag pointed to (sha256:…)")
    .option("--at <time>", "the digest the tag pointed to at this time (RFC 3339)")
    .action(
      bind(async (ctx, [ref]: [string], o: { digest?: string; at?: string }) => {
        if ((o.digest === undefined) === (o.at === undefined))
          throw new UsageError("give either --digest or --at");
        const uid = isUid(ref) ? ref : await liveTagUid(ctx, ref);
        const at = parseTime("at", o.at);
        const tag = await ctx.client.registry.tags.restoreTag({
          uid,
          digest: o.digest ?? "",
          ...(at === undefined ? {} : { time: timestampFromDate(new Date(at)) }),
        });
        print(ctx, [tag], tagView, true);
      }),
    );
}

/** The uid of tag ORG/REPO:TAG; a deleted tag is found only by its uid, which the error says. */
async function liveTagUid(ctx: CommandContext, ref: string): Promise<string> {
  const image = requireTag(parseImage(ref));
  const repo = await resolveRepo(ctx.client, image.repository);
  try {
    return (await resolveTag(ctx.client, repo.uid, image.tag)).uid;
  } catch (err) {
    if (err instanceof WharfApiError && err.code === Code.NotFound) {
      throw new UsageError(
        `${ref} has no tag now; to restore a deleted tag, give its uid (the subject of its tag.deleted event)`,
      );
    }
    throw err;
  }
}

function requireTag(image: ImageReference): ImageReference & { tag: string } {
  if (!image.tag || image.digest)
    throw new UsageError(
      `expected ORG/REPO:TAG (got "${image.repository}${image.digest ? `@${image.digest}` : ""}")`,
    );
  return image as ImageReference & { tag: string };
}

function parseTime(flag: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value as string);
  if (Number.isNaN(time))
    throw new UsageError(`--${flag} must be a time (RFC 3339, e.g. 2026-11-01T00:00:00Z), got "${value}"`);
  return new Date(time).toISOString();
}

/** Runs `fn` over `items` with at most `limit` calls in flight, keeping the order. */
async function mapLimited<T, U>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<U>,
): Promise<U[]> {
  const out: U[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The record `--pin` chooses: the latest one, or with `at` the last one at or before it. NOT_FOUND
 * when the tag did not exist (or was deleted) then.
 */
export function pinnedRecord(
  records: readonly TagHistoryRecord[],
  image: string,
  at?: string,
): TagHistoryRecord {
  const chosen =
    at === undefined
      ? records.at(-1)
      : records.filter((r) => Date.parse(r.updateTimestamp) <= Date.parse(at)).at(-1);
  if (!chosen || chosen.deleted) {
    throw new WharfApiError({
      code: Code.NotFound,
      message: at === undefined ? `${image} has no current digest` : `${image} pointed to nothing at ${at}`,
    });
  }
  return chosen;
}

async function history(ctx: CommandContext, ref: string, o: Record<string, unknown>): Promise<void> {
  const image = requireTag(parseImage(ref));
  const since = parseTime("since", o.since);
  const until = parseTime("until", o.until);
  const at = parseTime("at", o.at);
  if (at !== undefined && !o.pin) throw new UsageError("--at goes with --pin");
  // For --at, the window must reach back before it: the record current at `at` may be older.
  const window = { ...(since && !o.pin ? { start: since } : {}), ...(until ? { end: until } : {}) };
  const records = await collectAll(ctx.client.tagHistory(image.repository, image.tag, window));
  if (o.pin) {
    const chosen = pinnedRecord(records, `${image.repository}:${image.tag}`, at);
    ctx.stdout.write(`${image.repository}@${chosen.digest}\n`);
    return;
  }
  const repo = await resolveRepo(ctx.client, image.repository);
  // A tag that moves back and forth points to the same digests again: describe each digest once.
  type Details = {
    architectures: string[];
    size: number | undefined;
    vulnerabilities?: Partial<Record<string, number>>;
  };
  const details = new Map<string, Promise<Details>>();
  const describeDigest = (digest: string) => {
    let found = details.get(digest);
    if (!found) {
      found = Promise.all([
        ctx.client.registry.images
          .getArchitectures({ repoUid: repo.uid, digest })
          .then((a) => a.architectures),
        ctx.client.registry.images
          .getSize({ repoUid: repo.uid, digest })
          .then((s) => Number(s.size))
          .catch(() => undefined),
        optionalReport(ctx, repo.uid, digest),
      ]).then(([architectures, size, report]) => ({
        architectures,
        size,
        ...(report ? { vulnerabilities: countBySeverity(report.vulnerabilityMatches) } : {}),
      }));
      details.set(digest, found);
    }
    return found;
  };
  const rows = await mapLimited(records, 8, async (r): Promise<HistoryRow> => {
    if (r.deleted)
      return { time: r.updateTimestamp, digest: "", deleted: true, architectures: [], size: undefined };
    return { time: r.updateTimestamp, digest: r.digest, deleted: false, ...(await describeDigest(r.digest)) };
  });
  print(ctx, rows, historyView);
}

async function digestOf(ctx: CommandContext, image: ImageReference): Promise<string> {
  return image.digest ?? ctx.client.resolve(`${image.repository}:${image.tag ?? "latest"}`);
}

async function describe(ctx: CommandContext, ref: string): Promise<ImageDescription> {
  const image = parseImage(ref);
  const repo = await resolveRepo(ctx.client, image.repository);
  const digest = await digestOf(ctx, image);
  const { architectures } = await ctx.client.registry.images.getArchitectures({ repoUid: repo.uid, digest });
  const sizes = await Promise.all(
    architectures.map(async (architecture) => {
      const { size } = await ctx.client.registry.images.getSize({ repoUid: repo.uid, digest, architecture });
      return { architecture, size: Number(size) };
    }),
  );
  const [referrers, signatures] = await Promise.all([
    fetchReferrers(ctx, image.repository, digest),
    signaturesOf(ctx, ref, digest),
  ]);
  return {
    image: `${image.repository}${image.tag ? `:${image.tag}` : ""}`,
    digest,
    architectures: sizes,
    referrers: referrers.map((r) => ({
      digest: r.digest,
      artifactType: r.artifactType ?? "",
      mediaType: r.mediaType,
    })),
    signedBy: verifiedSigners(signatures),
  };
}

/** platform → layers of an image, or of each image of an index. */
async function layersByPlatform(
  ctx: CommandContext,
  repository: string,
  digest: string,
): Promise<Map<string, NonNullable<Manifest["layers"]>>> {
  const manifest = await fetchManifest(ctx, repository, digest);
  const out = new Map<string, NonNullable<Manifest["layers"]>>();
  if (manifest.manifests) {
    for (const child of manifest.manifests) {
      if (!child.platform || child.platform.os === "unknown") continue; // attestations, not images
      const platform = `${child.platform.os}/${child.platform.architecture}${child.platform.variant ? `/${child.platform.variant}` : ""}`;
      out.set(platform, (await fetchManifest(ctx, repository, child.digest)).layers ?? []);
    }
  } else {
    out.set("", manifest.layers ?? []);
  }
  return out;
}

/**
 * The differences of two images: per platform, `-` layers only the first has and `+` only the
 * second; then, when both images have a vulnerability report, the vulnerability ids only one has
 * (`-` fixed in the second, `+` new in it). An image without a report adds no vulnerability lines.
 */
async function diff(ctx: CommandContext, first: string, second: string): Promise<DiffRow[]> {
  const a = parseImage(first);
  const b = parseImage(second);
  const [digestA, digestB] = await Promise.all([digestOf(ctx, a), digestOf(ctx, b)]);
  const [layersA, layersB, reportA, reportB] = await Promise.all([
    layersByPlatform(ctx, a.repository, digestA),
    layersByPlatform(ctx, b.repository, digestB),
    resolveRepo(ctx.client, a.repository).then((r) => optionalReport(ctx, r.uid, digestA)),
    resolveRepo(ctx.client, b.repository).then((r) => optionalReport(ctx, r.uid, digestB)),
  ]);
  // Single-architecture images compare with each other whatever their platform entry says.
  const single = layersA.size === 1 && layersB.size === 1;
  const changes: DiffRow[] = [];
  const platforms = single ? [""] : [...new Set([...layersA.keys(), ...layersB.keys()])].sort();
  for (const platform of platforms) {
    const left = (single ? [...layersA.values()][0] : layersA.get(platform)) ?? [];
    const right = (single ? [...layersB.values()][0] : layersB.get(platform)) ?? [];
    const inRight = new Set(right.map((l) => l.digest));
    const inLeft = new Set(left.map((l) => l.digest));
    for (const l of left)
      if (!inRight.has(l.digest))
        changes.push({ kind: "layer", change: "-", platform, digest: l.digest, size: l.size });
    for (const l of right)
      if (!inLeft.has(l.digest))
        changes.push({ kind: "layer", change: "+", platform, digest: l.digest, size: l.size });
  }
  if (reportA && reportB) {
    for (const c of vulnerabilityChanges(reportA.vulnerabilityMatches, reportB.vulnerabilityMatches))
      changes.push({ kind: "vulnerability", ...c });
  }
  return changes;
}
