import type { Command } from "commander";
import { type SearchResponse, SearchResponseSchema } from "../../../gen/platform/registry/v2/search_pb.js";
import { UsageError } from "../output.js";
import { type Bind, print } from "../program.js";
import { protoView } from "../views.js";

/** One line of `images search`: a result of any kind. */
interface SearchRow {
  kind: "repo" | "tag" | "image";
  reference: string;
  uid: string;
  detail: string;
}

const rowView = {
  columns: [
    { header: "KIND", cell: (r: SearchRow) => r.kind },
    { header: "REFERENCE", cell: (r: SearchRow) => r.reference },
    { header: "DETAIL", cell: (r: SearchRow) => r.detail },
  ],
  id: (r: SearchRow) => r.uid,
};

const answerView = protoView(SearchResponseSchema, []);

/** The answer's results as table rows: repos, then tags, then images. */
function rowsOf(answer: SearchResponse): SearchRow[] {
  return [
    ...answer.repos.map((m) => ({
      kind: "repo" as const,
      reference: m.repoPath,
      uid: m.repo?.uid ?? "",
      detail: m.repo?.description ?? "",
    })),
    ...answer.tags.map((m) => ({
      kind: "tag" as const,
      reference: `${m.repoPath}:${m.tag?.name ?? ""}`,
      uid: m.tag?.uid ?? "",
      detail: m.tag?.digest ?? "",
    })),
    ...answer.images.map((m) => ({
      kind: "image" as const,
      reference: `${m.repoPath}@${m.digest}`,
      uid: m.digest,
      detail: m.tags.join(", "),
    })),
  ];
}

/**
 * `wharf images search <text> [--limit n]`: repos by path, tags by name and images by digest
 * prefix, in the repos the caller may list (SearchService, ADR 0063). A table of KIND, REFERENCE,
 * DETAIL (a note on stderr when a kind was cut); `-o json|yaml` gives the whole answer; `-o id` the
 * repo and tag uids and image digests.
 */
export function registerImagesSearch(images: Command, bind: Bind): void {
  images
    .command("search <text>")
    .description(
      "repositories whose path and tags whose name contain the text, and images whose digest starts with it (4+ hex digits), in the repos you may list",
    )
    .option("--limit <n>", "the most results of each kind (at most 50)", "10")
    .action(
      bind(async (ctx, [text]: [string], o: { limit: string }) => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit <= 0)
          throw new UsageError(`--limit must be a positive whole number (got "${o.limit}")`);
        const answer = await ctx.client.registry.search.search({ query: text, pageSize: limit });
        if (ctx.format === "json" || ctx.format === "yaml") {
          print(ctx, [answer], answerView, true);
          return;
        }
        print(ctx, rowsOf(answer), rowView);
        if (answer.truncated && ctx.format === "table")
          ctx.stderr.write("more results than --limit: narrow the text or raise --limit\n");
      }),
    );
}
