import type { Selectable } from "kysely";
import { alreadyExists, notFound } from "../../core/errors.js";
import type { ExternalGroupRoleMappingRow, ExternalGroupRoleMappingStore } from "../iam-store.js";
import { readInt } from "./dialect.js";
import { listWindow, type SortColumns, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet, isIn } from "./predicates.js";
import type { ExternalGroupRoleMappingsTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

/** Mappings are immutable: update_time orders like create_time. */
const MAPPING_SORT: SortColumns = {
  uid: STANDARD_SORT.uid,
  create_time: STANDARD_SORT.create_time,
  update_time: STANDARD_SORT.create_time,
};

function toMappingRow(r: Selectable<ExternalGroupRoleMappingsTable>): ExternalGroupRoleMappingRow {
  return {
    uid: r.uid,
    identityProviderUid: r.parent_uid,
    externalGroupId: r.external_group_id,
    roleUid: r.role_uid,
    scope: r.scope,
    createTime: readInt(r.create_time),
  };
}

/**
 * ExternalGroupRoleMappingStore over `external_group_role_mappings` (parent_uid is the identity
 * provider, FK with cascade); see `ExternalGroupRoleMappingStore` in iam-store.ts.
 */
export function createExternalGroupRoleMappingStore(ctx: SqlContext): ExternalGroupRoleMappingStore {
  const { db } = ctx;
  return {
    async get(uid) {
      const r = await db
        .selectFrom("external_group_role_mappings")
        .selectAll()
        .where("uid", "=", uid)
        .executeTakeFirst();
      return r && toMappingRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "external_group_role_mappings",
          from: db.selectFrom("external_group_role_mappings"),
          where: (uid) => [
            ...equalsIfSet("parent_uid", filter.identityProviderUid),
            ...equalsIfSet("external_group_id", filter.externalGroupId),
            ...equalsIfSet("role_uid", filter.roleUid),
            ...commonPredicates(filter, uid),
          ],
          sort: MAPPING_SORT,
          toRow: toMappingRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("external_group_role_mappings")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.identityProviderUid),
              external_group_id: row.externalGroupId,
              role_uid: row.roleUid,
              scope: row.scope,
              create_time: row.createTime,
            })
            .execute(),
        {
          unique: () =>
            alreadyExists(
              "external_group_role_mapping",
              row.uid,
              `identity provider ${row.identityProviderUid} already maps group "${row.externalGroupId}" to role ${row.roleUid} at ${row.scope}`,
            ),
          foreignKey: () => notFound("identity_provider", row.identityProviderUid),
        },
      );
      ctx.changed("external_group_role_mappings");
    },

    async delete(uid) {
      const result = await db
        .deleteFrom("external_group_role_mappings")
        .where("uid", "=", uid)
        .executeTakeFirst();
      ctx.changed("external_group_role_mappings");
      return result.numDeletedRows > 0n;
    },

    async forProvider(idpUid, externalGroupIds) {
      if (externalGroupIds.length === 0) return [];
      const rows = await db
        .selectFrom("external_group_role_mappings")
        .selectAll()
        .where("parent_uid", "=", idpUid)
        .where(isIn([...new Set(externalGroupIds)], "external_group_id"))
        .orderBy("uid")
        .execute();
      return rows.map(toMappingRow);
    },

    async countByRole(roleUid) {
      const r = await db
        .selectFrom("external_group_role_mappings")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .where("role_uid", "=", roleUid)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}
