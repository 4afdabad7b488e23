import { appendCommitCases } from "./append-commit.cases.js";
import { basicCases } from "./basic.cases.js";
import { forEachBlobDriver } from "./blob-test-backends.js";
import { keyCases } from "./keys.cases.js";
import { largeCases } from "./large.cases.js";
import { listCases } from "./list.cases.js";
import { pipeCases } from "./pipe.cases.js";
import { rangeCases } from "./range.cases.js";
import { sizeCheckCases } from "./size-check.cases.js";

// One conformance suite for the BlobDriver seam, run against the filesystem (temp dir), memory and
// S3 (s3rver in-process, or WHARF_TEST_S3_URL) drivers. S3 is skipped, with the reason, when s3rver
// cannot start or WHARF_TEST_S3=skip.
await forEachBlobDriver("BlobDriver conformance", (fx) => {
  basicCases(fx);
  rangeCases(fx);
  pipeCases(fx);
  appendCommitCases(fx);
  listCases(fx);
  keyCases(fx);
  largeCases(fx);
  sizeCheckCases(fx);
});
