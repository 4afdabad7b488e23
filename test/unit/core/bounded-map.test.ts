import assert from "node:assert/strict";
import { test } from "node:test";
import { setBounded } from "../../../src/core/bounded-map.js";

test("setBounded evicts the oldest entries once the map is full, and reports each", () => {
  const map = new Map<string, number>();
  const evicted: Array<[string, number]> = [];
  for (const [i, key] of ["a", "b", "c", "d", "e"].entries()) {
    setBounded(map, key, i, 3, (k, v) => evicted.push([k, v]));
  }
  assert.deepEqual(
    [...map],
    [
      ["c", 2],
      ["d", 3],
      ["e", 4],
    ],
  );
  assert.deepEqual(evicted, [
    ["a", 0],
    ["b", 1],
  ]);
});

test("setBounded moves a key set again to the newest place instead of evicting another", () => {
  const map = new Map<string, number>();
  setBounded(map, "a", 1, 2);
  setBounded(map, "b", 2, 2);
  setBounded(map, "a", 3, 2);
  assert.deepEqual(
    [...map],
    [
      ["b", 2],
      ["a", 3],
    ],
  );
  setBounded(map, "c", 4, 2);
  assert.deepEqual(
    [...map],
    [
      ["a", 3],
      ["c", 4],
    ],
  );
});

test("setBounded trims a map already over its bound", () => {
  const map = new Map([
    [1, "x"],
    [2, "y"],
    [3, "z"],
  ]);
  setBounded(map, 4, "w", 2);
  assert.deepEqual([...map.keys()], [3, 4]);
});
