import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse as parseYaml } from "yaml";
import { chooseFormat, render, timeCell, UsageError, type View } from "../../../../src/cli/client/output.js";
import { formatBytes } from "../../../../src/sdk/byte-size.js";

interface Row {
  uid: string;
  name: string;
}

const view: View<Row> = {
  columns: [
    { header: "UID", cell: (r) => r.uid },
    { header: "NAME", cell: (r) => r.name },
  ],
};
const acme: Row = { uid: "u1", name: "acme" };
const rows: Row[] = [
  { uid: "u1", name: "acme" },
  { uid: "u2", name: "globex" },
];

describe("output formats", () => {
  it("a table on a terminal, JSON when piped, or what -o asks; anything else is a usage error", () => {
    assert.equal(chooseFormat(undefined, true), "table");
    assert.equal(chooseFormat(undefined, false), "json");
    assert.equal(chooseFormat("yaml", true), "yaml");
    assert.throws(
      () => chooseFormat("xml", true),
      (err: Error) =>
        err instanceof UsageError && /-o must be one of table, json, yaml, id/.test(err.message),
    );
  });

  it("a list: a JSON array, a YAML sequence, one id per line, a table with a header row", () => {
    assert.deepEqual(JSON.parse(render(rows, view, "json")), rows);
    assert.deepEqual(parseYaml(render(rows, view, "yaml")), rows);
    assert.equal(render(rows, view, "id"), "u1\nu2\n");
    const table = render(rows, view, "table").split("\n");
    assert.match(table[1] ?? "", /UID\s+│ NAME/);
    assert.ok(table.some((line) => /u2\s+│ globex/.test(line)));
    assert.equal(render([], view, "json"), "[]\n");
    assert.equal(render([], view, "id"), "");
  });

  it("one resource: a JSON object, a YAML map, its id, a header-per-line table", () => {
    assert.deepEqual(JSON.parse(render([acme], view, "json", { single: true })), acme);
    assert.deepEqual(parseYaml(render([acme], view, "yaml", { single: true })), acme);
    assert.equal(render([acme], view, "id", { single: true }), "u1\n");
    assert.match(render([acme], view, "table", { single: true }), /NAME\s+│ acme/);
  });

  it("a view's own id and JSON shape are used where given", () => {
    const named: View<Row> = { ...view, id: (r) => r.name, json: (r) => ({ n: r.name }) };
    assert.equal(render(rows, named, "id"), "acme\nglobex\n");
    assert.deepEqual(JSON.parse(render(rows, named, "json")), [{ n: "acme" }, { n: "globex" }]);
  });

  it("tables have no color codes unless asked", () => {
    assert.equal(render(rows, view, "table").includes("\u001b["), false);
  });

  it("times as RFC 3339 UTC, sizes in binary units", () => {
    assert.equal(timeCell({ seconds: 1_700_000_000n, nanos: 123_000_000 }), "2023-11-14T22:13:20.123Z");
    assert.equal(timeCell(undefined), "");
    assert.equal(formatBytes(512), "512 B");
    assert.equal(formatBytes(1536), "1.5 KiB");
    assert.equal(formatBytes(5n * 1024n * 1024n), "5.0 MiB");
  });
});
