import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { cycleOfTag } from "../../../../src/registry/eol/cycle-match.js";

const cycles = (...names: string[]) => names.map((cycle) => ({ cycle }));

describe("cycleOfTag: the longest cycle name that prefixes the tag at a non-digit boundary", () => {
  it("matches the cycle itself and its patch and variant tags", () => {
    const python = cycles("3", "3.1", "3.10", "3.11", "3.9");
    assert.equal(cycleOfTag("3.10", python)?.cycle, "3.10");
    assert.equal(cycleOfTag("3.10.4-slim", python)?.cycle, "3.10");
    assert.equal(cycleOfTag("3.10-dev", python)?.cycle, "3.10");
    assert.equal(cycleOfTag("3.1.7", python)?.cycle, "3.1");
    assert.equal(cycleOfTag("3.9.18", python)?.cycle, "3.9");
  });

  it("never lets 3.1 match 3.10 (a digit follows the prefix)", () => {
    assert.equal(cycleOfTag("3.10.4", cycles("3.1"))?.cycle, undefined);
    assert.equal(cycleOfTag("3.10", cycles("3.1", "3"))?.cycle, "3");
    assert.equal(cycleOfTag("180", cycles("18")), undefined);
  });

  it("answers undefined without a fitting cycle, and ignores empty names", () => {
    assert.equal(cycleOfTag("latest", cycles("18", "20")), undefined);
    assert.equal(cycleOfTag("20", cycles("")), undefined);
    assert.equal(cycleOfTag("20", []), undefined);
  });

  it("works for names that are not numbers (codenames, v-prefixes)", () => {
    assert.equal(cycleOfTag("bookworm-slim", cycles("bookworm", "bullseye"))?.cycle, "bookworm");
    assert.equal(cycleOfTag("v18.1.0", cycles("v18", "v1"))?.cycle, "v18");
  });

  const version = fc
    .array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 3 })
    .map((parts) => parts.join("."));
  const suffix = fc.constantFrom("", "-slim", "-dev", "-fips", "-r1", "-alpine3.19");

  it("property: the chosen cycle prefixes the tag, is followed by a non-digit, and no longer such cycle exists", () => {
    fc.assert(
      fc.property(fc.array(version, { maxLength: 8 }), version, suffix, (names, tagVersion, tail) => {
        const tag = `${tagVersion}${tail}`;
        const found = cycleOfTag(tag, cycles(...names));
        const fits = (name: string) =>
          name !== "" && tag.startsWith(name) && !/[0-9]/.test(tag.charAt(name.length));
        const fitting = names.filter(fits);
        if (fitting.length === 0) return found === undefined;
        return (
          found !== undefined && fits(found.cycle) && fitting.every((n) => n.length <= found.cycle.length)
        );
      }),
    );
  });

  it("property: a tag made of a cycle name plus a patch or variant finds that cycle when it is the longest", () => {
    fc.assert(
      fc.property(version, fc.constantFrom(".4", ".0.1", "-slim", ""), (name, tail) => {
        const tag = `${name}${tail}`;
        return cycleOfTag(tag, cycles(name))?.cycle === name;
      }),
    );
  });
});
