import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { ChangeBatch, ChangeHub } from "../change-feed.js";
import type { Database } from "./schema.js";

/** The NOTIFY channel every Wharf process on one database listens to. */
export const CHANGE_CHANNEL = "wharf_changes";

/** The `application_name` of the listening connection (how an operator or a test finds it). */
export const CHANGE_LISTENER_NAME = "wharf-change-feed";

/** NOTIFY refuses payloads of 8000 bytes or more; a batch that long is sent as "everything". */
const MAX_PAYLOAD = 7900;

/**
 * The payload of one batch: `<instance> <table,table,…>`, or `<instance> *` for everything. The
 * instance lets a process skip its own notifications (it published them locally at commit).
 */
export function encodeChanges(instance: string, tables: readonly string[]): string {
  const payload = `${instance} ${tables.join(",")}`;
  return Buffer.byteLength(payload) < MAX_PAYLOAD ? payload : `${instance} *`;
}

/** The batch in `payload`, or undefined when it is this `instance`'s own or malformed. */
export function decodeChanges(payload: string, instance: string): ChangeBatch | undefined {
  const space = payload.indexOf(" ");
  if (space <= 0 || payload.slice(0, space) === instance) return undefined;
  const rest = payload.slice(space + 1);
  if (rest === "*") return { tables: [], everything: true };
  return { tables: rest.split(",").filter((t) => t !== ""), everything: false };
}

/**
 * Sends `tables` as one notification on `db`. Inside a transaction PostgreSQL delivers it when
 * (and only if) the transaction commits; outside one, at once.
 */
export async function notifyChanges(
  db: Kysely<Database>,
  instance: string,
  tables: readonly string[],
): Promise<void> {
  await sql`select pg_notify(${CHANGE_CHANNEL}, ${encodeChanges(instance, tables)})`.execute(db);
}

/** A running listener; `close` stops it (and any reconnection) and ends its connection. */
export interface ChangeListener {
  close(): Promise<void>;
}

/**
 * Listens on CHANGE_CHANNEL with a dedicated connection (not one of the pool: LISTEN belongs to a
 * session) and publishes other instances' batches to `hub`. When the connection drops it
 * reconnects with exponential back-off (`minBackoffMs` doubling up to `maxBackoffMs`) and then
 * publishes `everything`, since notifications sent meanwhile are lost. Resolves once LISTEN is in
 * effect; rejects when the first connection fails.
 */
export async function listenForChanges(opts: {
  url: string;
  instance: string;
  hub: ChangeHub;
  onError?: (err: unknown) => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}): Promise<ChangeListener> {
  const { url, instance, hub } = opts;
  const onError = opts.onError ?? (() => {});
  const minBackoffMs = opts.minBackoffMs ?? 100;
  const maxBackoffMs = opts.maxBackoffMs ?? 5000;
  let client: pg.Client | undefined;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;

  async function connect(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: url, application_name: CHANGE_LISTENER_NAME });
    c.on("error", (err) => {
      onError(err);
      drop(c);
    });
    c.on("end", () => drop(c));
    c.on("notification", (msg) => {
      if (msg.channel !== CHANGE_CHANNEL || msg.payload === undefined) return;
      const batch = decodeChanges(msg.payload, instance);
      if (batch) hub.publish(batch);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (err) {
      c.end().catch(() => {});
      throw err;
    }
    return c;
  }

  function drop(c: pg.Client): void {
    if (client !== c) return;
    client = undefined;
    c.end().catch(() => {});
    reconnectLater();
  }

  function reconnectLater(): void {
    if (closed || timer) return;
    const delay = Math.min(maxBackoffMs, minBackoffMs * 2 ** attempt++);
    timer = setTimeout(async () => {
      timer = undefined;
      try {
        const c = await connect();
        if (closed) {
          await c.end();
          return;
        }
        client = c;
        attempt = 0;
        hub.publish({ tables: [], everything: true });
      } catch (err) {
        onError(err);
        reconnectLater();
      }
    }, delay);
    timer.unref();
  }

  client = await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
