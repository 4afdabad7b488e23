import type { Command } from "commander";
import { type Quota, QuotaSchema, UsageSchema } from "../../../gen/platform/registry/v2/quotas_pb.js";
import { formatBytes } from "../../../sdk/byte-size.js";
import { UsageError } from "../output.js";
import { type Bind, print, subcommand } from "../program.js";
import { groupUid } from "../resolve.js";
import { protoView } from "../views.js";

const limitCell = (value: bigint | undefined, format: (n: bigint) => string) =>
  value === undefined || value === 0n ? "unlimited" : format(value);

const usageView = protoView(UsageSchema, [
  { header: "STORAGE", cell: (u) => formatBytes(u.storageBytes ?? 0n) },
  { header: "STORAGE QUOTA", cell: (u) => limitCell(u.quota?.storageBytes, formatBytes) },
  { header: "REPOS", cell: (u) => String(u.repoCount ?? 0n) },
  { header: "REPO QUOTA", cell: (u) => limitCell(u.quota?.repoCount, String) },
  { header: "TAGS", cell: (u) => String(u.tagCount ?? 0n) },
]);

const quotaView = protoView(
  QuotaSchema,
  [
    { header: "STORAGE QUOTA", cell: (q: Quota) => limitCell(q.storageBytes, formatBytes) },
    { header: "REPO QUOTA", cell: (q: Quota) => limitCell(q.repoCount, String) },
  ],
  () => "",
);

const UNIT_BYTES: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  ki: 2 ** 10,
  kib: 2 ** 10,
  mi: 2 ** 20,
  mib: 2 ** 20,
  gi: 2 ** 30,
  gib: 2 ** 30,
  ti: 2 ** 40,
  tib: 2 ** 40,
};

/**
 * A size as `--storage` takes it: bytes (`1048576`), decimal units (`10GB`, `10G`: 10^9) or binary
 * ones (`10GiB`, `10Gi`: 2^30), case-insensitive, fractions allowed (rounded down); `0` or
 * `unlimited` is 0 (no limit). UsageError otherwise.
 */
export function parseByteSize(text: string): bigint {
  const value = text.trim().toLowerCase();
  if (value === "unlimited") return 0n;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(value);
  const unit = m ? UNIT_BYTES[m[2] as string] : undefined;
  if (!m || unit === undefined) {
    throw new UsageError(
      `"${text}" is not a size (e.g. 500MiB, 10GiB, 1TB, a number of bytes, or unlimited)`,
    );
  }
  const bytes = Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) throw new UsageError(`"${text}" is too large`);
  return BigInt(bytes);
}

/** A count as `--repos` takes it: a whole number, `0` or `unlimited` for no limit. */
export function parseCount(text: string): bigint {
  const value = text.trim().toLowerCase();
  if (value === "unlimited") return 0n;
  if (!/^\d{1,15}$/.test(value))
    throw new UsageError(`"${text}" is not a count (a whole number, or unlimited)`);
  return BigInt(value);
}

/** `wharf images usage` and `wharf images quota set` (registry usage and quotas, ADR 0047). */
export function registerImagesQuotas(images: Command, bind: Bind): void {
  images
    .command("usage <group>")
    .description(
      "what an organization or folder stores (distinct manifests and blobs, each once), its repos and tags, and the organization's quota",
    )
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const usage = await ctx.client.registry.quotas.getUsage({
          groupUid: await groupUid(ctx.client, ref),
        });
        print(ctx, [usage], usageView, true);
      }),
    );
  const quota = subcommand(
    images,
    "quota",
    "an organization's registry quota (set by the platform administrator)",
  );
  quota
    .command("set <organization>")
    .description(
      "set an organization's quota (platform administrator only); an option left out keeps its value",
    )
    .option("--storage <size>", "bytes it may store: 500MiB, 10GiB, 1TB, … or unlimited (0)")
    .option("--repos <count>", "repos it may hold, or unlimited (0)")
    .action(
      bind(async (ctx, [ref]: [string], o: { storage?: string; repos?: string }) => {
        if (o.storage === undefined && o.repos === undefined)
          throw new UsageError("give --storage, --repos or both");
        const request = {
          groupUid: await groupUid(ctx.client, ref),
          ...(o.storage === undefined ? {} : { storageBytes: parseByteSize(o.storage) }),
          ...(o.repos === undefined ? {} : { repoCount: parseCount(o.repos) }),
        };
        print(ctx, [await ctx.client.registry.quotas.updateQuota(request)], quotaView, true);
      }),
    );
}
