import type { Command } from "commander";
import { SbomPackageSchema, SbomSchema } from "../../../gen/platform/registry/v2/sbom_pb.js";
import { type Bind, print } from "../program.js";
import { parseImage, resolveRepo } from "../resolve.js";
import { field, protoView } from "../views.js";

const packageView = protoView(SbomPackageSchema, [
  field("NAME", "name"),
  field("VERSION", "version"),
  field("LICENSE", "license"),
  field("PURL", "purl"),
]);

const sbomView = protoView(
  SbomSchema,
  [
    field("FORMAT", "format"),
    field("REFERRER", "referrer"),
    { header: "PACKAGES", cell: (s) => String(s.packages.length) },
  ],
  (s) => s.referrer,
);

/**
 * `wharf images sbom <image> [--search text]`: the packages of the image's SBOM (ADR 0060). A table
 * of packages (its format and referrer on stderr); `-o json|yaml` gives the whole answer.
 */
export function registerImagesSbom(images: Command, bind: Bind): void {
  images
    .command("sbom <image>")
    .description(
      "the packages of an image's SBOM (ORG/REPO[:TAG|@DIGEST]): name, version, license, purl, from its newest SPDX or CycloneDX referrer",
    )
    .option("--search <text>", "only packages whose name or purl contains this text (case-insensitive)")
    .action(
      bind(async (ctx, [ref]: [string], o: { search?: string }) => {
        const image = parseImage(ref);
        const repo = await resolveRepo(ctx.client, image.repository);
        const digest =
          image.digest ?? (await ctx.client.resolve(`${image.repository}:${image.tag ?? "latest"}`));
        const sbom = await ctx.client.registry.sbom.getSbom({
          repoUid: repo.uid,
          digest,
          query: o.search ?? "",
        });
        if (ctx.format !== "table") {
          print(ctx, [sbom], sbomView, true);
          return;
        }
        ctx.stderr.write(
          `${sbom.format} SBOM from referrer ${sbom.referrer}: ${sbom.packages.length} packages\n`,
        );
        print(ctx, sbom.packages, packageView);
      }),
    );
}
