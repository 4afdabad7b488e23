import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { VexDocumentSchema } from "../../../gen/platform/registry/v1/vex_pb.js";
import { UsageError } from "../output.js";
import { type Bind, print, subcommand } from "../program.js";
import { parseImage, resolveRepo } from "../resolve.js";
import { protoView } from "../views.js";

/** Largest document the CLI sends (the server's limit, ADR 0059). */
const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;

const vexDocumentView = protoView(
  VexDocumentSchema,
  [
    { header: "DIGEST", cell: (d) => d.digest },
    { header: "STATEMENTS", cell: (d) => String(d.statementCount) },
    { header: "APPLIED", cell: (d) => String(d.appliedCount) },
    { header: "DOCUMENT", cell: (d) => d.documentId },
  ],
  (d) => d.id,
);

/** `wharf vulns vex upload`: store an OpenVEX document about an image (ADR 0059). */
export function registerVulnsVex(vulns: Command, bind: Bind): void {
  const vex = subcommand(vulns, "vex", "OpenVEX statements that suppress an image's vulnerability matches");
  vex
    .command("upload <image> <file>")
    .description(
      "store the OpenVEX document in <file> (bare, an in-toto statement or a DSSE envelope; at most 4 MiB) " +
        "for an image (ORG/REPO[:TAG|@DIGEST], default tag latest): its not_affected and fixed statements " +
        "naming the image suppress the matching vulnerabilities; prints how many statements apply",
    )
    .action(
      bind(async (ctx, [ref, file]: [string, string]) => {
        const document = await readFile(file).catch((err: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot read ${file}: ${err.code ?? err.message}`);
        });
        if (document.length > MAX_DOCUMENT_BYTES)
          throw new UsageError(`${file} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
        const image = parseImage(ref);
        const repo = await resolveRepo(ctx.client, image.repository);
        const digest =
          image.digest ?? (await ctx.client.resolve(`${image.repository}:${image.tag ?? "latest"}`));
        const stored = await ctx.client.registryV1.vex.createVexDocument({
          repoUid: repo.uid,
          digest,
          document,
        });
        print(ctx, [stored], vexDocumentView, true);
      }),
    );
}
