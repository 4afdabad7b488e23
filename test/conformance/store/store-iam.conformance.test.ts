import { forEachEngine } from "../../support/databases.js";
import { groupCases } from "./groups.cases.js";
import { hierarchyCases } from "./hierarchy.cases.js";
import { iamFederationCases } from "./iam-federation.cases.js";
import { identityCases } from "./identities.cases.js";
import { keysAndSettingsCases } from "./keys-settings.cases.js";
import { loginSessionCases } from "./login-sessions.cases.js";
import { refreshTokenCases } from "./refresh-tokens.cases.js";
import { roleBindingCases } from "./role-bindings.cases.js";
import { roleCases } from "./roles.cases.js";

// One of four files of the Store seam's conformance suite (split so the runner runs them side by
// side), run against every engine; PostgreSQL is skipped, with the reason, when no server is available.
forEachEngine(
  "Store conformance: IAM: groups, identities, roles, bindings, federation, sessions, keys",
  (db) => {
    groupCases(db);
    hierarchyCases(db);
    identityCases(db);
    roleCases(db);
    roleBindingCases(db);
    iamFederationCases(db);
    loginSessionCases(db);
    refreshTokenCases(db);
    keysAndSettingsCases(db);
  },
);
