import type { Command } from "commander";
import {
  ArtifactSchema,
  ArtifactVersionSchema,
  Ecosystem,
  EcosystemCountSchema,
} from "../../../gen/platform/libraries/v2/artifacts_pb.js";
import { formatBytes } from "../../../sdk/byte-size.js";
import { listAll } from "../../../sdk/pages.js";
import { LIBRARIES_SERVICES } from "../../../sdk/services/libraries.js";
import { timeCell, UsageError } from "../output.js";
import { type BindFor, collect, print, subcommand } from "../program.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

const ECOSYSTEMS: Record<string, Ecosystem> = {
  java: Ecosystem.JAVA,
  python: Ecosystem.PYTHON,
  javascript: Ecosystem.JAVASCRIPT,
};

function ecosystemName(e: Ecosystem): string {
  return Object.entries(ECOSYSTEMS).find(([, v]) => v === e)?.[0] ?? "";
}

function ecosystems(names: string[] | undefined): Ecosystem[] {
  return (names ?? []).map((n) => {
    const e = ECOSYSTEMS[n.toLowerCase()];
    if (e === undefined)
      throw new UsageError(`--ecosystem must be one of ${Object.keys(ECOSYSTEMS).join(", ")} (got "${n}")`);
    return e;
  });
}

const artifactView = protoView(ArtifactSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  { header: "ECOSYSTEM", cell: (a) => ecosystemName(a.ecosystem) },
  field("LATEST", "latestVersion"),
  field("VERSIONS", "versionCount"),
]);

const versionView = protoView(ArtifactVersionSchema, [
  field("VERSION", "version"),
  { header: "SIZE", cell: (v) => formatBytes(v.sizeBytes) },
  { header: "REMEDIATED", cell: (v) => (v.remediated ? "yes" : "") },
  { header: "UPDATED", cell: (v) => timeCell(v.updateTime) },
]);

const countView = protoView(
  EcosystemCountSchema,
  [{ header: "ECOSYSTEM", cell: (c) => ecosystemName(c.ecosystem) }, field("COUNT", "totalCount")],
  (c) => ecosystemName(c.ecosystem),
);

/** The services `wharf libraries` calls (only these load: see leanClient). */
const SERVICES = { libraries: LIBRARIES_SERVICES };

/** `wharf libraries …`: the language libraries (Java, Python, JavaScript artifacts) of the server. */
export function registerLibraries(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const libraries = subcommand(program, "libraries", CLIENT_GROUPS.libraries);
  libraries
    .command("list")
    .description("list libraries")
    .option("--ecosystem <name>", "java, python or javascript (repeatable)", collect)
    .option("--query <text>", "names containing this")
    .option("--remediated", "only those with remediated versions")
    .action(
      bind(async (ctx, _args, o: { ecosystem?: string[]; query?: string; remediated?: boolean }) => {
        const request = {
          ecosystems: ecosystems(o.ecosystem),
          query: o.query ?? "",
          remediated: o.remediated === true,
        };
        const rows = [];
        for await (const a of listAll(ctx.client.libraries.artifacts.listArtifacts, request)) rows.push(a);
        print(ctx, rows, artifactView);
      }),
    );
  libraries
    .command("versions <library>")
    .description("the versions of a library (its uid)")
    .action(
      bind(async (ctx, [artifactId]) => {
        const rows = [];
        for await (const v of listAll(ctx.client.libraries.artifacts.listArtifactVersions, { artifactId }))
          rows.push(v);
        print(ctx, rows, { ...versionView, id: (v) => v.version });
      }),
    );
  libraries
    .command("count")
    .description("how many libraries each ecosystem has")
    .option("--ecosystem <name>", "only this ecosystem (repeatable)", collect)
    .action(
      bind(async (ctx, _args, o: { ecosystem?: string[] }) => {
        const { counts } = await ctx.client.libraries.artifacts.countArtifacts({
          ecosystems: ecosystems(o.ecosystem),
        });
        print(ctx, counts, countView);
      }),
    );
}
