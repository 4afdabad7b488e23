import { forEachEngine } from "../../support/databases.js";
import { advisoryCases } from "./advisories.cases.js";
import { eolCases } from "./eol.cases.js";
import { eventCases } from "./events.cases.js";
import { groupCases } from "./groups.cases.js";
import { hierarchyCases } from "./hierarchy.cases.js";
import { iamFederationCases } from "./iam-federation.cases.js";
import { identityCases } from "./identities.cases.js";
import { keysAndSettingsCases } from "./keys-settings.cases.js";
import { libraryCases } from "./libraries.cases.js";
import { loginSessionCases } from "./login-sessions.cases.js";
import { migrationCases } from "./migrations.cases.js";
import { pagingCases } from "./paging.cases.js";
import { refreshTokenCases } from "./refresh-tokens.cases.js";
import { registryDataCases } from "./registry-data.cases.js";
import { repoTagCases } from "./repos-tags.cases.js";
import { roleBindingCases } from "./role-bindings.cases.js";
import { roleCases } from "./roles.cases.js";
import { transactionCases } from "./transactions.cases.js";
import { vulnReportCases } from "./vuln-reports.cases.js";

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
  libraryCases(db);
  advisoryCases(db);
  vulnReportCases(db);
  eolCases(db);
});
