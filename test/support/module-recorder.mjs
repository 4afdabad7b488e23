// Preloaded (`node --import`) into a process under test: records the URL of every ES module it
// resolves, one a line, in the file WHARF_TEST_MODULE_LOG names (nothing when unset). Tests read
// it to prove what a process did NOT load (e.g. no tracing SDK without an exporter).
import { register } from "node:module";

const file = process.env.WHARF_TEST_MODULE_LOG;
if (file) register("./module-recorder-hooks.mjs", import.meta.url, { data: { file } });
