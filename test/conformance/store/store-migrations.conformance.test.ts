import { forEachEngine } from "../../support/databases.js";
import { migrationCases } from "./migrations.cases.js";

// One of four files of the Store seam's conformance suite (split so the runner runs them side by
// side), run against every engine; PostgreSQL is skipped, with the reason, when no server is available.
forEachEngine("Store conformance: migrations", (db) => {
  migrationCases(db);
});
