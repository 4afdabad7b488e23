import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { loadOpenApiDocument } from "../../support/openapi-validator.js";

interface RedocOperation {
  type: string;
  httpVerb: string;
  path: string;
  parameters: unknown[];
  requestBody?: { content?: { mediaTypes: { schema?: { type: unknown } }[] } };
  responses: { code: string; content?: { mediaTypes: { schema?: { type: unknown } }[] } }[];
  items?: RedocOperation[];
}

// Redoc's library build: the same parser and models as the standalone bundle /docs serves.
const redoc = createRequire(import.meta.url)("redoc") as {
  loadAndBundleSpec(doc: unknown): Promise<unknown>;
  AppStore: new (spec: unknown, url: string, options: object) => { menu: { items: RedocOperation[] } };
};

describe("Redoc renders the document", () => {
  it("lists every operation of the document, with its parameters, body and answers", async () => {
    const doc = loadOpenApiDocument();
    const store = new redoc.AppStore(await redoc.loadAndBundleSpec(doc), "openapi.json", {});
    const operations: RedocOperation[] = [];
    const walk = (items: RedocOperation[]) => {
      for (const item of items) {
        if (item.type === "operation") operations.push(item);
        if (item.items) walk(item.items);
      }
    };
    walk(store.menu.items);
    const expected = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m} ${path}`),
    );
    assert.deepEqual(operations.map((o) => `${o.httpVerb} ${o.path}`).sort(), expected.sort());
    for (const op of operations) {
      const where = `${op.httpVerb} ${op.path}`;
      assert.equal(op.parameters.length, doc.paths[op.path]?.[op.httpVerb]?.parameters?.length ?? 0, where);
      assert.deepEqual(
        op.responses.map((r) => r.code),
        ["200", "default"],
        where,
      );
      for (const response of op.responses) {
        assert.ok(response.content?.mediaTypes[0]?.schema, `${where} ${response.code}: a schema`);
      }
      if (doc.paths[op.path]?.[op.httpVerb]?.requestBody) {
        assert.ok(op.requestBody?.content?.mediaTypes[0]?.schema, `${where}: a body schema`);
      }
    }
  });
});
