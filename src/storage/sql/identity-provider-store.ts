import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { IdentityProviderRow, IdentityProviderStore } from "../iam-store.js";
import { readBool, readInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet } from "./predicates.js";
import type { IdentityProvidersTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toIdentityProviderRow(r: Selectable<IdentityProvidersTable>): IdentityProviderRow {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    name: r.name,
    description: r.description,
    defaultRole: r.default_role,
    oidc: {
      issuer: r.issuer,
      clientId: r.client_id,
      clientSecret: r.client_secret,
      additionalScopes: JSON.parse(r.additional_scopes) as string[],
      groupsClaim: r.groups_claim,
      correlationRule: readInt(r.correlation_rule),
      pkceEnabled: readBool(r.pkce_enabled),
    },
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/**
 * IdentityProviderStore over `identity_providers` (parent_uid is the group); see
 * `IdentityProviderStore` in iam-store.ts. The row keeps the OIDC client secret (the login flow
 * needs it); services must never return it. Deleting a provider deletes its external group role
 * mappings (FK cascade). `update` never changes createTime or the group.
 */
export function createIdentityProviderStore(ctx: SqlContext): IdentityProviderStore {
  const { db, dialect } = ctx;
  const duplicate = (row: IdentityProviderRow) => () =>
    alreadyExists(
      "identity_provider",
      row.name,
      `an identity provider named "${row.name}" already exists in group ${row.groupUid}`,
    );
  const mutable = (row: IdentityProviderRow) => ({
    name: row.name,
    description: row.description,
    default_role: row.defaultRole,
    issuer: row.oidc.issuer,
    client_id: row.oidc.clientId,
    client_secret: row.oidc.clientSecret,
    additional_scopes: JSON.stringify(row.oidc.additionalScopes),
    groups_claim: row.oidc.groupsClaim,
    correlation_rule: row.oidc.correlationRule,
    pkce_enabled: dialect.bool(row.oidc.pkceEnabled),
    update_time: row.updateTime,
  });

  return {
    async get(uid) {
      const r = await db
        .selectFrom("identity_providers")
        .selectAll()
        .where("uid", "=", uid)
        .executeTakeFirst();
      return r && toIdentityProviderRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "identity_providers",
          from: db.selectFrom("identity_providers"),
          where: (uid) => [...equalsIfSet("name", filter.name), ...commonPredicates(filter, uid)],
          sort: STANDARD_SORT,
          toRow: toIdentityProviderRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("identity_providers")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.groupUid),
              create_time: row.createTime,
              ...mutable(row),
            })
            .execute(),
        { unique: duplicate(row) },
      );
      ctx.changed("identity_providers");
    },

    async update(row) {
      const result = await guardWrite(
        ctx,
        () =>
          db
            .updateTable("identity_providers")
            .set(mutable(row))
            .where("uid", "=", row.uid)
            .executeTakeFirst(),
        { unique: duplicate(row) },
      );
      ctx.changed("identity_providers");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      // Explicit as well as by FK cascade, so the mappings' cached counts are invalidated too.
      return ctx.transaction(async (tx) => {
        await tx.db.deleteFrom("external_group_role_mappings").where("parent_uid", "=", uid).execute();
        const result = await tx.db.deleteFrom("identity_providers").where("uid", "=", uid).executeTakeFirst();
        tx.changed("identity_providers", "external_group_role_mappings");
        return result.numDeletedRows > 0n;
      });
    },

    async countByGroup(groupUid) {
      const r = await db
        .selectFrom("identity_providers")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .where("parent_uid", "=", groupUid)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async countByDefaultRole(roleUid) {
      const r = await db
        .selectFrom("identity_providers")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .where("default_role", "=", roleUid)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}
