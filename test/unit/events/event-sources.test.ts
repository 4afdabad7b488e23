import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { EVENT_RESOURCES } from "../../../src/events/event-types.js";

/** Every REST path the API serves, as the generated OpenAPI document lists them (from the route table). */
const servedPaths = Object.keys(
  (
    JSON.parse(readFileSync(new URL("../../../src/gen/openapi.json", import.meta.url), "utf8")) as {
      paths: Record<string, unknown>;
    }
  ).paths,
);

describe("event sources", () => {
  for (const [resource, { collection }] of Object.entries(EVENT_RESOURCES)) {
    it(`${resource}: ce-source ${collection} is a path the API serves`, () => {
      const served = servedPaths.some(
        (p) => p === collection || p.startsWith(`${collection}/`) || p.startsWith(`${collection}:`),
      );
      assert.ok(
        served,
        `${collection} is no API route (nearest: ${servedPaths
          .filter((p) => p.startsWith(collection.slice(0, 9)))
          .slice(0, 5)
          .join(", ")})`,
      );
    });
  }
});

describe("event types in the API reference", () => {
  const reference = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8");
  for (const [resource, { stem }] of Object.entries(EVENT_RESOURCES)) {
    it(`${resource}: docs/api.md names ${stem}`, () => {
      assert.ok(reference.includes(`${stem}.`), `${stem} is not in docs/api.md`);
    });
  }
});
