import { forEachEngine } from "../../support/databases.js";
import { advisoryCases } from "./advisories.cases.js";
import { auditCases } from "./audit.cases.js";
import { eolCases } from "./eol.cases.js";
import { eventCases } from "./events.cases.js";
import { libraryCases } from "./libraries.cases.js";
import { redeliveryCases } from "./redelivery.cases.js";
import { vexCases } from "./vex.cases.js";
import { vulnReportCases } from "./vuln-reports.cases.js";

// One of four files of the Store seam's conformance suite (split so the runner runs them side by
// side), run against every engine; PostgreSQL is skipped, with the reason, when no server is available.
forEachEngine("Store conformance: events, libraries, advisories, vulnerability reports, EOL", (db) => {
  eventCases(db);
  redeliveryCases(db);
  libraryCases(db);
  advisoryCases(db);
  vulnReportCases(db);
  vexCases(db);
  eolCases(db);
  auditCases(db);
});
