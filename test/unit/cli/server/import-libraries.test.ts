import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { librariesImporter } from "../../../../src/cli/server/import-libraries.js";
import type { ImportSink } from "../../../../src/cli/server/import-store.js";

function recordingSink() {
  const seen = { total: undefined as number | undefined, advanced: 0, rejected: [] as unknown[] };
  const sink: ImportSink = {
    start: (total) => {
      seen.total = total;
    },
    advance: (n = 1) => {
      seen.advanced += n;
    },
    reject: (record) => {
      seen.rejected.push(record);
    },
    count: () => undefined,
  };
  return { sink, seen };
}

describe("the libraries JSONL reader", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-libraries-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("numbers lines as an editor does (CRLF, blank lines skipped but counted), rejecting bad ones", async () => {
    const file = join(dir, "crlf.jsonl");
    const good =
      '{"ecosystem":"python","name":"six","version":"1.16.0","publishTime":"2021-05-05T14:00:00Z"}';
    await writeFile(
      file,
      `${good}\r\n\r\n{"ecosystem":"python"}\r\n   \r\n${good.replace("1.16.0", "1.17.0")}\r\n`,
    );
    const { sink, seen } = recordingSink();
    const records = await librariesImporter.read(file, sink);
    assert.deepEqual(
      records.map((r) => r.version),
      ["1.16.0", "1.17.0"],
    );
    assert.equal(seen.total, 3, "blank lines are not records");
    assert.deepEqual(seen.rejected, [{ location: "line 3", field: "name", message: "is required" }]);
    assert.equal(seen.advanced, 1, "rejected lines are done at once; the others when written");
  });

  it("an empty file has no records", async () => {
    const file = join(dir, "empty.jsonl");
    await writeFile(file, "");
    const { sink, seen } = recordingSink();
    assert.deepEqual(await librariesImporter.read(file, sink), []);
    assert.equal(seen.total, 0);
  });
});
