import { forEachEngine } from "../../../test/support/databases.js";
import { eventCases } from "./conformance/events.cases.js";
import { groupCases } from "./conformance/groups.cases.js";
import { hierarchyCases } from "./conformance/hierarchy.cases.js";
import { iamFederationCases } from "./conformance/iam-federation.cases.js";
import { identityCases } from "./conformance/identities.cases.js";
import { keysAndSettingsCases } from "./conformance/keys-settings.cases.js";
import { loginSessionCases } from "./conformance/login-sessions.cases.js";
import { migrationCases } from "./conformance/migrations.cases.js";
import { pagingCases } from "./conformance/paging.cases.js";
import { refreshTokenCases } from "./conformance/refresh-tokens.cases.js";
import { registryDataCases } from "./conformance/registry-data.cases.js";
import { repoTagCases } from "./conformance/repos-tags.cases.js";
import { roleBindingCases } from "./conformance/role-bindings.cases.js";
import { roleCases } from "./conformance/roles.cases.js";
import { transactionCases } from "./conformance/transactions.cases.js";

// One conformance suite for the Store seam, run against every engine (PostgreSQL is skipped, with
// the reason, when no server is available).
forEachEngine("Store conformance", (db) => {
  migrationCases(db);
  groupCases(db);
  hierarchyCases(db);
  identityCases(db);
  roleCases(db);
  roleBindingCases(db);
  repoTagCases(db);
  registryDataCases(db);
  transactionCases(db);
  keysAndSettingsCases(db);
  pagingCases(db);
  iamFederationCases(db);
  loginSessionCases(db);
  refreshTokenCases(db);
  eventCases(db);
});
