import type { TestDatabase } from "./databases.js";
import { registeredPerson } from "./registered-person.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";
import { startTestServer, type TestServer } from "./wharf-server.js";

/** What the v1 face suites start from: a server on the suite's engine and two organizations. */
export interface V1World {
  wharf: TestServer;
  /** Subscribed (at path `/hook`) to every event of organization A. */
  receiver: WebhookReceiver;
  /** Organization A ("acme"), created by the administrator. */
  orgA: string;
  /** A token of the owner of organization B ("globex"), who holds nothing in A. */
  ownerB: string;
  /** The PostgreSQL database URL (undefined on SQLite, whose data is in `wharf.dataDir`). */
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * Starts a server on `db`'s engine (a fresh PostgreSQL database, or SQLite) with fast event
 * delivery to loopback sinks, organization A with a webhook receiver subscribed to it, and
 * organization B owned by another registered person.
 */
export async function startV1World(db: TestDatabase): Promise<V1World> {
  const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
  const wharf = await startTestServer({
    ...(databaseUrl ? { databaseUrl } : {}),
    events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
    config: { eventsAllowLoopback: "true" },
  });
  const receiver = await startWebhookReceiver();
  const orgA = await wharf.create("/iam/v2/groups", { name: "acme" });
  await wharf.create(`/events/v2/subscriptions/${orgA}`, { sink: receiver.url() });
  const ownerB = (await registeredPerson(wharf, "owner-b")).token;
  await wharf.create("/iam/v2/groups", { name: "globex" }, ownerB);
  return {
    wharf,
    receiver,
    orgA,
    ownerB,
    databaseUrl,
    async close() {
      await wharf.close();
      await receiver.close();
    },
  };
}
