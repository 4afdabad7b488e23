import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Kysely, sql } from "kysely";
import { connectSqlite } from "../../../../src/storage/sql/connect-sqlite.js";
import type { Database } from "../../../../src/storage/sql/schema.js";

describe("connectSqlite", () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  /** A path in a new temporary folder, `nested` levels below it. */
  const tempPath = async (...nested: string[]) => {
    const dir = await mkdtemp(join(tmpdir(), "wharf-connect-sqlite-"));
    dirs.push(dir);
    return join(dir, ...nested, "wharf.db");
  };

  /** The value `pragma <name>` answers on the connection. */
  const pragma = async (db: Kysely<Database>, name: string) => {
    const { rows } = await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(db);
    return rows[0] === undefined ? undefined : Object.values(rows[0])[0];
  };

  it("opens a file with WAL, synchronous=NORMAL, foreign keys, in-memory temp storage and a busy timeout", async () => {
    const db = connectSqlite(await tempPath("nested"));
    try {
      assert.equal(await pragma(db, "journal_mode"), "wal");
      assert.equal(await pragma(db, "synchronous"), 1n, "NORMAL");
      assert.equal(await pragma(db, "foreign_keys"), 1n);
      // Statement journals and temp tables stay in memory: a write transaction whose statements
      // may need undoing otherwise creates, writes and deletes a file per transaction.
      assert.equal(await pragma(db, "temp_store"), 2n, "MEMORY");
      assert.equal(await pragma(db, "busy_timeout"), 5000n);
    } finally {
      await db.destroy();
    }
  });

  it("sets the autocheckpoint and the WAL size limit it is given", async () => {
    const db = connectSqlite(await tempPath(), { walAutocheckpointPages: 123, walSizeLimitBytes: 4096 });
    try {
      assert.equal(await pragma(db, "wal_autocheckpoint"), 123n);
      assert.equal(await pragma(db, "journal_size_limit"), 4096n);
    } finally {
      await db.destroy();
    }
  });
});
