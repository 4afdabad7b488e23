import { forEachEngine } from "../../support/databases.js";
import { immutabilityCases } from "./immutability.cases.js";
import { insightsCases } from "./insights.cases.js";
import { integrityCases } from "./integrity.cases.js";
import { pagingCases } from "./paging.cases.js";
import { pullPolicyCases } from "./pull-policies.cases.js";
import { registryDataCases } from "./registry-data.cases.js";
import { replicationCases } from "./replication.cases.js";
import { repoTagCases } from "./repos-tags.cases.js";
import { retentionCases } from "./retention.cases.js";
import { searchCases } from "./search.cases.js";
import { transactionCases } from "./transactions.cases.js";
import { trustedKeyCases } from "./trusted-keys.cases.js";
import { upstreamCases } from "./upstreams.cases.js";
import { usageCases } from "./usage.cases.js";

// One of four files of the Store seam's conformance suite (split so the runner runs them side by
// side), run against every engine; PostgreSQL is skipped, with the reason, when no server is available.
forEachEngine("Store conformance: registry: repos, tags, manifests, blobs, transactions, paging", (db) => {
  repoTagCases(db);
  registryDataCases(db);
  transactionCases(db);
  pagingCases(db);
  integrityCases(db);
  immutabilityCases(db);
  usageCases(db);
  insightsCases(db);
  retentionCases(db);
  upstreamCases(db);
  replicationCases(db);
  pullPolicyCases(db);
  trustedKeyCases(db);
  searchCases(db);
});
