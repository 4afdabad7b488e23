import type { Insertable, Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { PolicySeverity, PullPolicyMode, PullPolicyRow, PullPolicyStore } from "../pull-policy-store.js";
import { readBool, readInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates } from "./predicates.js";
import type { PullPoliciesTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toPolicyRow(r: Selectable<PullPoliciesTable>): PullPolicyRow {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    mode: r.mode as PullPolicyMode,
    requireSignature: readBool(r.require_signature),
    denySeverity: r.deny_severity as PolicySeverity,
    onlyFixable: readBool(r.only_fixable),
    denyEol: readBool(r.deny_eol),
    requireSbom: readBool(r.require_sbom),
    exemptIdentities: JSON.parse(r.exempt_identities) as string[],
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/** PullPolicyStore over `pull_policies` (migration 0024); see pull-policy-store.ts. */
export function createPullPolicyStore(ctx: SqlContext): PullPolicyStore {
  const { db } = ctx;
  const bool = (value: boolean) => (ctx.dialect.name === "postgres" ? value : value ? 1 : 0);
  const columns = (row: PullPolicyRow) =>
    ({
      name: row.name,
      mode: row.mode,
      require_signature: bool(row.requireSignature),
      deny_severity: row.denySeverity,
      only_fixable: bool(row.onlyFixable),
      deny_eol: bool(row.denyEol),
      require_sbom: bool(row.requireSbom),
      exempt_identities: JSON.stringify(row.exemptIdentities),
      update_time: row.updateTime,
    }) satisfies Partial<Insertable<PullPoliciesTable>>;
  const duplicate = (row: PullPolicyRow) => () =>
    alreadyExists("policy", row.name, `the parent already has a policy named "${row.name}"`);
  return {
    async get(uid) {
      const row = await db.selectFrom("pull_policies").selectAll().where("uid", "=", uid).executeTakeFirst();
      return row && toPolicyRow(row);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "pull_policies",
          from: db.selectFrom("pull_policies"),
          where: (uid) => commonPredicates(filter, uid),
          sort: STANDARD_SORT,
          toRow: toPolicyRow,
        },
        window,
      );
    },

    async all() {
      const rows = await db.selectFrom("pull_policies").selectAll().execute();
      return rows.map(toPolicyRow);
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("pull_policies")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.parentUid),
              ...columns(row),
              create_time: row.createTime,
            })
            .execute(),
        { unique: duplicate(row) },
      );
      ctx.changed("pull_policies");
    },

    async update(row) {
      const result = await guardWrite(
        ctx,
        () => db.updateTable("pull_policies").set(columns(row)).where("uid", "=", row.uid).executeTakeFirst(),
        { unique: duplicate(row) },
      );
      ctx.changed("pull_policies");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("pull_policies").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("pull_policies");
      return result.numDeletedRows > 0n;
    },
  };
}
