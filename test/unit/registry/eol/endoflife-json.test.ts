import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { EolFileError, parseEndOfLifeJson } from "../../../../src/registry/eol/endoflife-json.js";
import { nodeReleasesAsEndOfLife } from "../../../support/node-releases-eol.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../../fixtures/eol/${name}`, import.meta.url), "utf8");
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe("parseEndOfLifeJson", () => {
  it("reads the legacy array: dates, eol true without a date, support dates, latest", () => {
    const data = parseEndOfLifeJson(fixture("python-legacy.json"));
    assert.equal(data.records, 4);
    assert.deepEqual(data.rejected, []);
    assert.deepEqual(data.cycles[1], {
      cycle: "3.10",
      codename: "",
      eolUndated: false,
      lts: false,
      latestVersion: "3.10.16",
      releaseDate: day("2021-10-04"),
      eolDate: day("2026-10-31"),
      latestReleaseDate: day("2024-12-03"),
      supportEndDate: day("2023-04-05"),
    });
    const old = data.cycles[3];
    assert.equal(old?.eolUndated, true);
    assert.equal(old?.eolDate, undefined);
  });

  it("reads the API v1 shape into the same cycles as the legacy file", () => {
    const legacy = parseEndOfLifeJson(fixture("python-legacy.json"));
    const v1 = parseEndOfLifeJson(fixture("python-v1.json"));
    assert.deepEqual(v1.rejected, []);
    // `support: true` of the legacy 3.1 has no date, so neither shape gives one.
    assert.deepEqual(v1.cycles, legacy.cycles);
  });

  it("reads lts as a date or a flag, and codenames (real Node.js data from node-releases)", () => {
    const data = parseEndOfLifeJson(JSON.stringify(nodeReleasesAsEndOfLife()));
    assert.deepEqual(data.rejected, []);
    const iron = data.cycles.find((c) => c.cycle === "20");
    assert.equal(iron?.codename, "Iron");
    assert.equal(iron?.lts, true);
    assert.equal(iron?.ltsFrom, day("2023-10-24"));
    assert.equal(iron?.eolDate, day("2026-04-30"));
    assert.equal(iron?.supportEndDate, day("2024-10-22"));
    const odd = data.cycles.find((c) => c.cycle === "21");
    assert.equal(odd?.lts, false);
    assert.equal(odd?.ltsFrom, undefined);
  });

  it("rejects bad releases with their index and field, keeping the good ones", () => {
    const data = parseEndOfLifeJson(fixture("bad-records.json"));
    assert.deepEqual(
      data.cycles.map((c) => c.cycle),
      ["20", "23"],
    );
    assert.deepEqual(
      data.rejected.map((r) => [r.location, r.field]),
      [
        ["[1]", "cycle"],
        ["[2]", "eol"],
        ["[3]", "eol"],
        ["[4]", ""],
        ["[5]", "cycle"],
        ["[6]", "cycle"],
      ],
    );
    assert.match(data.rejected[1]?.message ?? "", /"2024-02-30" is not a date YYYY-MM-DD/);
    assert.match(data.rejected[4]?.message ?? "", /appears twice/);
  });

  it("names the v1 location and nested fields", () => {
    const text = JSON.stringify({
      result: { releases: [{ name: "1", latest: { name: "1.0", date: "soon" } }] },
    });
    const data = parseEndOfLifeJson(text);
    assert.deepEqual(data.rejected, [
      { location: "result.releases[0]", field: "latest.date", message: '"soon" is not a date YYYY-MM-DD' },
    ]);
  });

  it("refuses a file that is not JSON or neither shape as a whole", () => {
    assert.throws(() => parseEndOfLifeJson("{nope"), EolFileError);
    assert.throws(() => parseEndOfLifeJson('{"releases": []}'), /expected an array of cycles/);
  });
});
