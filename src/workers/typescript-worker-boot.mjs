// Entry of every Wharf worker thread (typescript-worker.ts): worker threads do not inherit the
// TypeScript loader the main thread runs under (`--import tsx` or bin/wharf.js's register()), so
// this plain-JavaScript file registers tsx in the thread, then imports the TypeScript module named
// by workerData.entry.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
