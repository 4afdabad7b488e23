import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { WHARF_SERVICES } from "../../../src/sdk/services.js";

const GEN = new URL("../../../src/gen/platform/", import.meta.url).pathname;

/** Every service generated from proto/platform, by its full name. */
async function generatedServices(): Promise<Map<string, DescService>> {
  const found = new Map<string, DescService>();
  const files = (await readdir(GEN, { recursive: true })).filter((f) => f.endsWith("_pb.ts"));
  for (const file of files) {
    const module = (await import(join(GEN, file))) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      const service = value as DescService;
      if (service?.kind === "service") found.set(service.typeName, service);
    }
  }
  return found;
}

function tableServices(): DescService[] {
  return Object.values(WHARF_SERVICES).flatMap((entry) =>
    (entry as DescService).kind === "service" ? [entry as DescService] : Object.values(entry),
  );
}

/**
 * Lists the reference leaves unpaged: v1 lists answer `{items}` whole (reference §3), the
 * advisory documents feed is bounded by its filters, and an image's signatures by the verifier's
 * cap (100; extensions.md fixes their answer as `{signatures}`).
 */
function unpaged(service: DescService, method: string): boolean {
  return (
    /\.v1\./.test(service.typeName) ||
    `${service.typeName}.${method}` === "platform.advisory.v2.SecurityAdvisoryService.ListDocuments" ||
    `${service.typeName}.${method}` === "platform.registry.v2.SignaturesService.ListSignatures"
  );
}

describe("the SDK's table of services", () => {
  it("holds every platform service generated from proto/, once", async () => {
    const table = tableServices().map((s) => s.typeName);
    assert.equal(new Set(table).size, table.length, "no service twice");
    assert.deepEqual([...table].sort(), [...(await generatedServices()).keys()].sort());
  });

  it("every List method pages: a page_token in, a next_page_token and exactly one list field out", () => {
    for (const service of tableServices()) {
      for (const method of service.methods.filter(
        (m) => m.name.startsWith("List") && !unpaged(service, m.name),
      )) {
        const where = `${service.typeName}.${method.name}`;
        assert.ok(
          method.input.fields.some((f) => f.name === "page_token"),
          `${where} takes page_token`,
        );
        assert.ok(
          method.output.fields.some((f) => f.name === "next_page_token"),
          `${where} answers next_page_token`,
        );
        assert.equal(
          method.output.fields.filter((f) => f.fieldKind === "list").length,
          1,
          `${where}: one list field`,
        );
      }
    }
  });
});
