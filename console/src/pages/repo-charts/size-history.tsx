import type { TagHistoryRecord } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { LineChart } from "../../components/charts/line-chart";
import { byteTicks } from "../../components/charts/scale";
import { Loading } from "../../components/loading";
import { formatBytes, formatTime } from "../../lib/format";
import { digestDetails } from "../../lib/image-details";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { formatDay } from "./day-format";
import { digestsOf, recentRecords, sizeSteps } from "./size-steps";

/**
 * Most distinct images whose size is looked up (each costs a few requests, shared with the
 * timeline, which shows 50 records at first).
 */
export const MAX_DIGESTS = 50;

/**
 * The size of the image `tag` named along its history, as a step line with a dot at each move
 * (the amd64 image of a multi-platform index, else its first, as the counts API measures it).
 * Sizes come from the same per-digest look-up the timeline uses, so each is asked once.
 */
export function SizeHistory({
  repoUid,
  tag,
  records: all,
}: {
  repoUid: string;
  tag: string;
  /** Oldest first. */
  records: readonly TagHistoryRecord[];
}) {
  const client = useClient();
  const { records, truncated } = recentRecords(all, MAX_DIGESTS);
  const digests = digestsOf(records);
  // The look-up runs again only when the digests change (`key`), not on every new array.
  const key = digests.join(",");
  const sizes = useQuery(async () => {
    const entries = await Promise.all(
      digests.map(async (digest) => {
        const { sizes } = await digestDetails(client, repoUid, digest);
        const size = (sizes.find((s) => s.architecture === "amd64") ?? sizes[0])?.size;
        return [digest, size === undefined ? undefined : Number(size)] as const;
      }),
    );
    return new Map(entries.filter((e): e is readonly [string, number] => e[1] !== undefined));
  }, [client, repoUid, key]);
  const points = sizes.data ? sizeSteps(records, sizes.data) : [];
  const first = points[0];
  return (
    <section aria-labelledby="size-history-heading" className="repo-chart">
      <h3 id="size-history-heading">Image size along the history</h3>
      <ApiError error={sizes.error} />
      {sizes.loading && !sizes.data && <Loading what="Loading image sizes" />}
      {truncated && first && (
        <p className="muted">
          The {MAX_DIGESTS} most recent images, since {formatTime(new Date(first.x).toISOString())}.
        </p>
      )}
      {sizes.data && (
        <LineChart
          title={`Size of ${tag} at each move`}
          series={[{ name: "size", tone: "accent", points }]}
          xDomain={first ? [first.x, Math.max(Date.now(), first.x)] : undefined}
          step
          xLabel="Moved at"
          formatX={(x) => formatTime(new Date(x).toISOString())}
          formatTick={formatDay}
          formatY={formatBytes}
          yTicks={byteTicks}
          emptyText={`No sizes known for ${tag}'s images.`}
        />
      )}
    </section>
  );
}
