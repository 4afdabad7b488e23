import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseLibraryVersionLine } from "../../../src/libraries/library-record.js";

const GOOD = {
  ecosystem: "ECOSYSTEM_PYTHON",
  name: "Flask-Admin",
  version: "1.6.1",
  description: "Simple admin interface",
  publishTime: "2024-03-01T10:00:00Z",
  sizeBytes: 120345,
  remediated: false,
};

function parse(fields: Record<string, unknown>) {
  return parseLibraryVersionLine(JSON.stringify(fields));
}

function problemOf(fields: Record<string, unknown> | string) {
  const result = typeof fields === "string" ? parseLibraryVersionLine(fields) : parse(fields);
  assert.ok("problem" in result, `expected a problem for ${JSON.stringify(fields)}`);
  return result.problem;
}

describe("parseLibraryVersionLine", () => {
  it("maps a full line to a record", () => {
    assert.deepEqual(parse(GOOD), {
      record: {
        ecosystem: "PYTHON",
        name: "Flask-Admin",
        version: "1.6.1",
        description: "Simple admin interface",
        publishTime: Date.parse("2024-03-01T10:00:00Z"),
        sizeBytes: 120345n,
        remediated: false,
      },
    });
  });

  it("accepts the ecosystem's enum name, short form and lower case", () => {
    for (const ecosystem of ["ECOSYSTEM_JAVA", "JAVA", "java", "ecosystem_java"]) {
      const result = parse({ ...GOOD, ecosystem, name: "org.example:core", version: "3.5.0-0.cgr.2" });
      assert.ok("record" in result, ecosystem);
      assert.equal(result.record.ecosystem, "JAVA");
    }
    const js = parse({ ...GOOD, ecosystem: "javascript", name: "@scope/left-pad", version: "1.3.0-cgr.1" });
    assert.ok("record" in js && js.record.ecosystem === "JAVASCRIPT");
  });

  it("takes sizeBytes as a number or a decimal string (beyond 2^53), and defaults the optional fields", () => {
    const big = parse({ ...GOOD, sizeBytes: "9007199254740993" });
    assert.ok("record" in big && big.record.sizeBytes === 9007199254740993n);
    const minimal = parse({
      ecosystem: "PYTHON",
      name: "six",
      version: "1.16.0",
      publishTime: "2021-05-05T00:00:00+02:00",
    });
    assert.ok("record" in minimal);
    assert.equal(minimal.record.description, "");
    assert.equal(minimal.record.sizeBytes, 0n);
    assert.equal(minimal.record.remediated, false);
    assert.equal(minimal.record.publishTime, Date.parse("2021-05-04T22:00:00Z"));
  });

  it("names the field of every bad input", () => {
    const cases: Array<[Record<string, unknown> | string, string, RegExp]> = [
      ["{not json", "", /not valid JSON/],
      ["[1,2]", "", /expected a JSON object/],
      ["null", "", /expected a JSON object/],
      [{ ...GOOD, ecosystem: undefined }, "ecosystem", /is required/],
      [{ ...GOOD, ecosystem: "RUST" }, "ecosystem", /unknown ecosystem "RUST"/],
      [{ ...GOOD, ecosystem: "ECOSYSTEM_UNSPECIFIED" }, "ecosystem", /unknown ecosystem/],
      [{ ...GOOD, ecosystem: 2 }, "ecosystem", /must be a string/],
      [{ ...GOOD, name: "" }, "name", /is required/],
      [{ ...GOOD, name: "bad name" }, "name", /not a PyPI project name/],
      [{ ...GOOD, ecosystem: "JAVA", name: "no-group", version: "1.0" }, "name", /groupId:artifactId/],
      [{ ...GOOD, ecosystem: "JAVASCRIPT", name: "Left-Pad", version: "1.0.0" }, "name", /npm package name/],
      [{ ...GOOD, version: undefined }, "version", /is required/],
      [{ ...GOOD, version: "banana" }, "version", /not a PEP 440 version/],
      [{ ...GOOD, ecosystem: "JAVASCRIPT", name: "x", version: "v1.0.0" }, "version", /not a semver version/],
      [{ ...GOOD, ecosystem: "JAVA", name: "a:b", version: "1 0" }, "version", /not a Maven version/],
      [{ ...GOOD, publishTime: undefined }, "publishTime", /is required/],
      [{ ...GOOD, publishTime: "yesterday" }, "publishTime", /not an RFC 3339 time/],
      [{ ...GOOD, publishTime: "2024-03-01" }, "publishTime", /not an RFC 3339 time/],
      [{ ...GOOD, publishTime: "2024-13-45T10:00:00Z" }, "publishTime", /not an RFC 3339 time/],
      [{ ...GOOD, publishTime: 1700000000 }, "publishTime", /must be a string/],
      [{ ...GOOD, sizeBytes: -1 }, "sizeBytes", /non-negative integer/],
      [{ ...GOOD, sizeBytes: 1.5 }, "sizeBytes", /non-negative integer/],
      [{ ...GOOD, sizeBytes: "12kb" }, "sizeBytes", /non-negative integer/],
      [{ ...GOOD, sizeBytes: "99999999999999999999" }, "sizeBytes", /non-negative integer/],
      [{ ...GOOD, remediated: "yes" }, "remediated", /true or false/],
      [{ ...GOOD, description: 7 }, "description", /must be a string/],
      [{ ...GOOD, description: "x".repeat(5000) }, "description", /longer than/],
    ];
    for (const [input, field, message] of cases) {
      const problem = problemOf(input);
      assert.equal(problem.field, field, JSON.stringify(input).slice(0, 100));
      assert.match(problem.message, message, JSON.stringify(input).slice(0, 100));
    }
  });
});
