import { lazy, Suspense, useEffect, useState } from "react";
import { Code, isWharfApiError, listAll } from "wharf/sdk";
import { ApiError } from "../components/api-error";
import { Breadcrumbs } from "../components/breadcrumbs";
import { EmptyState } from "../components/empty-state";
import { Loading } from "../components/loading";
import { PullInstructions } from "../components/pull-instructions";
import { SignatureBadge } from "../components/signature-badge";
import { TagTimeline } from "../components/tag-timeline";
import { collect } from "../lib/collect";
import { formatAgo, formatTime, pathWithUid, shortDigest } from "../lib/format";
import { Markdown } from "../lib/markdown";
import { useGroupPath, useRegistryHost } from "../lib/paths";
import { Link, useSearchParams } from "../lib/router";
import { mayUpdateTags } from "../lib/tag-permission";
import { useQuery } from "../lib/use-query";
import { useClient, useWharf } from "../lib/wharf-context";

/** The charts (and the chart components) are their own chunk, fetched once the page is rendered. */
const RepoCharts = lazy(() => import("./repo-charts/repo-charts"));

/** Most tags listed. */
const TAG_LIMIT = 2000;

/** Performance mark set once the tags and the selected tag's timeline are on screen (bench/console.ts). */
export const RENDERED_MARK = "wharf:repo-page-rendered";

/**
 * The tag whose history is shown: the one in the URL, else `latest`, else (once the tags are
 * known and there is no `latest`) the most recently updated one. `latest` is assumed before the
 * tags arrive, so its history loads alongside them rather than after.
 */
function selectedTag(
  fromUrl: string | null,
  tags: readonly { name: string }[] | undefined,
): string | undefined {
  if (fromUrl) return fromUrl;
  if (!tags || tags.some((t) => t.name === "latest")) return "latest";
  return tags[0]?.name;
}

/** The tag kinds ListTags hides unless asked for, and whether each is shown. */
type HiddenTagKinds = { includeReferrers: boolean; includeDates: boolean; includeEpochs: boolean };
const NONE_SHOWN: HiddenTagKinds = { includeReferrers: false, includeDates: false, includeEpochs: false };
const TAG_KINDS: ReadonlyArray<readonly [keyof HiddenTagKinds, string]> = [
  ["includeReferrers", "signature and referrer tags (sha256-…)"],
  ["includeDates", "dated builds (…-20yymmdd)"],
  ["includeEpochs", "epoch builds (…-rN)"],
];

/** A repository: tags, the selected tag's history timeline, pull instructions and the readme. */
export default function RepoPage(params: Record<string, string>) {
  const uid = params["*"] ?? "";
  const client = useClient();
  const { me } = useWharf();
  const groupUid = uid.split("/").slice(0, -1).join("/");
  const path = useGroupPath(groupUid);
  const host = useRegistryHost();
  const search = useSearchParams();
  const repo = useQuery(() => client.registry.repos.getRepo({ uid }), [client, uid]);
  const [shown, setShown] = useState<HiddenTagKinds>(NONE_SHOWN);
  const tags = useQuery(
    () =>
      collect(
        listAll(client.registry.tags.listTags, {
          uidp: { childrenOf: uid },
          orderBy: "update_time desc",
          pageSize: 200,
          ...shown,
        }),
        TAG_LIMIT,
      ),
    [client, uid, shown],
  );
  const readme = useQuery(async () => {
    try {
      return (await client.registry.repos.getRepoReadme({ uid })).content;
    } catch (err) {
      if (isWharfApiError(err) && err.code === Code.NotFound) return "";
      throw err;
    }
  }, [client, uid]);

  const imageName =
    repo.data && path.data ? [...path.data.map((s) => s.name), repo.data.name].join("/") : undefined;
  const image = imageName && host.data ? `${host.data}/${imageName}` : undefined;
  const selected = selectedTag(search.get("tag"), tags.data);
  const history = useQuery(
    () =>
      imageName && selected
        ? collect(client.tagHistory(imageName, selected), 100_000)
        : Promise.resolve(undefined),
    [client, imageName, selected],
  );

  const selectedRow = tags.data?.find((t) => t.name === selected);
  const [restored, setRestored] = useState("");
  const restore =
    selectedRow && mayUpdateTags(me, uid)
      ? {
          tag: selectedRow.name,
          onRestore: async (digest: string) => {
            const tag = await client.registry.tags.restoreTag({ uid: selectedRow.uid, digest });
            setRestored(`Restored ${tag.name} to ${shortDigest(tag.digest)}.`);
            tags.reload();
            history.reload();
          },
        }
      : undefined;
  // A message about another tag's restore does not belong to this one.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the selection changes
  useEffect(() => setRestored(""), [selected]);

  const rendered = tags.data !== undefined && (history.data !== undefined || selected === undefined);
  // The charts mount only after the mark: their chunk and requests never count against it.
  const [chartsShown, setChartsShown] = useState(false);
  useEffect(() => {
    if (!rendered) return;
    performance.mark(RENDERED_MARK);
    setChartsShown(true);
  }, [rendered]);

  return (
    <main id="main">
      <Breadcrumbs steps={path.data ?? []} current={repo.data?.name} />
      <h1>{image ?? repo.data?.name ?? "Repository"}</h1>
      {repo.data?.description && <p>{repo.data.description}</p>}
      <ApiError error={repo.error ?? path.error} />
      <div className="two-columns">
        <section aria-labelledby="tags-heading">
          <h2 id="tags-heading">Tags</h2>
          <fieldset className="tag-kinds">
            <legend>Also show</legend>
            {TAG_KINDS.map(([key, label]) => (
              <label key={key}>
                <input
                  type="checkbox"
                  checked={shown[key]}
                  onChange={(e) => setShown({ ...shown, [key]: e.currentTarget.checked })}
                />{" "}
                {label}
              </label>
            ))}
          </fieldset>
          <ApiError error={tags.error} />
          {tags.loading && !tags.data && <Loading what="Loading tags" />}
          {tags.data?.length === 0 && (
            <EmptyState title="No tags yet">
              <p>Push a first image:</p>
              <pre className="command">
                <code>
                  skopeo copy docker://docker.io/library/alpine:latest docker://{image ?? "<image>"}:latest
                </code>
              </pre>
            </EmptyState>
          )}
          {tags.data && tags.data.length > 0 && (
            <div className="table-wrap">
              <table className="tags">
                <caption className="visually-hidden">Tags, recently updated first</caption>
                <thead>
                  <tr>
                    <th scope="col">Tag</th>
                    <th scope="col">Digest</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {tags.data.map((t) => (
                    <tr key={t.uid} aria-current={t.name === selected ? "true" : undefined}>
                      <td>
                        <Link to={`${pathWithUid("/repos", uid)}?tag=${encodeURIComponent(t.name)}`}>
                          {t.name}
                        </Link>{" "}
                        {t.deprecated && <span className="badge warn">deprecated (EOL)</span>}{" "}
                        <SignatureBadge signers={t.verifiedSigners} />
                      </td>
                      <td className="mono">{shortDigest(t.digest)}</td>
                      <td title={formatTime(t.updateTime)}>{formatAgo(t.updateTime)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
        <div>
          {selected && (
            <section aria-labelledby="history-heading">
              <h2 id="history-heading">
                History of <code>{selected}</code>
              </h2>
              <ApiError error={history.error} />
              {history.loading && !history.data && <Loading what="Loading the history" />}
              <p role="status" className="restore-status">
                {restored}
              </p>
              {history.data && image && (
                <TagTimeline records={history.data} repoUid={uid} image={image} restore={restore} />
              )}
            </section>
          )}
          {chartsShown && selected && history.data && (
            <Suspense fallback={<Loading what="Loading the charts" />}>
              <RepoCharts repoUid={uid} tag={selected} records={history.data} />
            </Suspense>
          )}
          {image && <PullInstructions reference={`${image}:${selected ?? "latest"}`} />}
          <section aria-labelledby="readme-heading">
            <h2 id="readme-heading">Readme</h2>
            <ApiError error={readme.error} />
            {readme.data ? (
              <div className="readme">
                <Markdown source={readme.data} baseLevel={3} />
              </div>
            ) : (
              readme.data === "" && <p className="muted">This repository has no readme.</p>
            )}
          </section>
        </div>
      </div>
    </main>
  );
}
