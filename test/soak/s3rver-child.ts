// Runs s3rver in its own process for the soak (in the load generator's process it would compete
// with the clients for one event loop): prints one JSON line with the driver options, then serves
// until SIGTERM.
import { startTestS3rver } from "../conformance/blobs/blob-test-backends.js";

const s3 = await startTestS3rver();
if ("skip" in s3) {
  process.stderr.write(`${s3.skip}\n`);
  process.exit(1);
}
process.stdout.write(`${JSON.stringify(s3.options)}\n`);
process.once("SIGTERM", () => {
  void s3.stop().then(() => process.exit(0));
});
