// Boots a Wharf server for `bench:registry` in its own process, so the benchmark's client does not
// share its event loop. Usage: wharf-process <data-dir> <log-file>. Listens on free loopback ports
// with the default filesystem blob store under <data-dir>, logs one JSON line per request to
// <log-file> (as `wharf serve` does to stdout), and prints one JSON line on stdout:
// {"pid", "apiUrl", "registryUrl", "apiToken", "registryToken"} (admin tokens, 2 h). Stops on
// SIGTERM/SIGINT or when stdin closes (the parent died).
// The server is the build in dist/, the code `wharf serve` runs (the npm scripts build it first).
import { createWriteStream } from "node:fs";
import { createIssuer } from "../../dist/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../../dist/authz/admin-identity.js";
import { loadConfig } from "../../dist/config/config.js";
import { systemClock } from "../../dist/core/clock.js";
import { newRootUid } from "../../dist/core/uidp.js";
import { startServer } from "../../dist/server.js";
import { stopWhenAsked } from "./stop-when-asked.js";

/** The JSON line this process prints once the server listens. */
export interface WharfInfo {
  pid: number;
  apiUrl: string;
  registryUrl: string;
  /** Admin tokens (2 h) for the API's and the registry's audience. */
  apiToken: string;
  registryToken: string;
  /**
   * A registered identity with no role yet (`bench-puller`) and its registry token (2 h): pulls
   * that pull policies apply to (the administrator's never are).
   */
  pullerUid: string;
  pullerRegistryToken: string;
}

const [dataDir, logFile] = process.argv.slice(2);
if (!dataDir || !logFile) throw new Error("usage: wharf-process <data-dir> <log-file>");

const log = createWriteStream(logFile, { flags: "a" });
// bench:events delivers to a receiver on loopback, and bench:mirror's upstream and remote are plain
// http on loopback, which sinks (and remotes) may reach only when allowed.
const config = loadConfig(
  {
    ...{ dataDir, apiAddr: "127.0.0.1:0", registryAddr: "127.0.0.1:0" },
    ...{ eventsAllowLoopback: "true", eventsAllowHttp: "true" },
  },
  {},
);
const server = await startServer(config, { logger: (line) => log.write(`${JSON.stringify(line)}\n`) });
const issuer = createIssuer({ store: server.store, issuerUrl: server.apiUrl, clock: systemClock });
const mint = (audience: string) => issuer.mint({ subject: ADMIN_IDENTITY_UID, audience, ttlSeconds: 7200 });

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await server.close();
  log.end();
  process.exit(0);
}
stopWhenAsked(stop);

const pullerUid = newRootUid();
await server.store.identities.insert({
  uid: pullerUid,
  name: "bench-puller",
  description: "",
  email: "bench-puller@example.com",
  claimMatch: { issuer: "https://idp.example.com", subject: "bench-puller" },
  createTime: Date.now(),
  updateTime: Date.now(),
});
const info: WharfInfo = {
  pid: process.pid,
  apiUrl: server.apiUrl,
  registryUrl: server.registryUrl,
  apiToken: await mint(server.apiUrl),
  registryToken: await mint(server.registryUrl),
  pullerUid,
  pullerRegistryToken: await issuer.mint({
    subject: pullerUid,
    audience: server.registryUrl,
    ttlSeconds: 7200,
  }),
};
process.stdout.write(`${JSON.stringify(info)}\n`);
