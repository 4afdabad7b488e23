import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { sql } from "kysely";
import { connectSqlite } from "./connect-sqlite.js";

describe("connectSqlite", () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("opens a file with WAL, synchronous=NORMAL, foreign keys, in-memory temp storage and a busy timeout", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wharf-connect-sqlite-"));
    dirs.push(dir);
    const db = connectSqlite(join(dir, "nested", "wharf.db"));
    try {
      const pragma = async (name: string) => {
        const { rows } = await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(db);
        return rows[0] === undefined ? undefined : Object.values(rows[0])[0];
      };
      assert.equal(await pragma("journal_mode"), "wal");
      assert.equal(await pragma("synchronous"), 1n, "NORMAL");
      assert.equal(await pragma("foreign_keys"), 1n);
      // Statement journals and temp tables stay in memory: a write transaction whose statements
      // may need undoing otherwise creates, writes and deletes a file per transaction.
      assert.equal(await pragma("temp_store"), 2n, "MEMORY");
      assert.equal(await pragma("busy_timeout"), 5000n);
    } finally {
      await db.destroy();
    }
  });

  it("sets the autocheckpoint and the WAL size limit it is given", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wharf-connect-sqlite-"));
    dirs.push(dir);
    const db = connectSqlite(join(dir, "wharf.db"), { walAutocheckpointPages: 123, walSizeLimitBytes: 4096 });
    try {
      const { rows: checkpoint } = await sql<{
        wal_autocheckpoint: bigint;
      }>`pragma wal_autocheckpoint`.execute(db);
      const { rows: limit } = await sql<{ journal_size_limit: bigint }>`pragma journal_size_limit`.execute(
        db,
      );
      assert.equal(checkpoint[0]?.wal_autocheckpoint, 123n);
      assert.equal(limit[0]?.journal_size_limit, 4096n);
    } finally {
      await db.destroy();
    }
  });
});
