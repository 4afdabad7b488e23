import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Command } from "commander";
import { DeliverySchema } from "../../../gen/platform/events/v2/subscriptions_pb.js";
import { CommandExit, EXIT } from "../exit-codes.js";
import { timeCell } from "../output.js";
import { type Bind, print } from "../program.js";
import { field, protoView } from "../views.js";

const redeliveryView = protoView(
  DeliverySchema,
  [
    field("UID", "uid"),
    field("STATE", "state"),
    field("EVENT ID", "eventId"),
    field("EVENT", "eventType"),
    field("REDELIVERY OF", "redeliveryOf"),
    { header: "EVENT TIME", cell: (d) => timeCell(d.eventTime) },
  ],
  (d) => d.uid,
);

/** An RFC 3339 time for --since, or a usage error naming the option. */
function sinceOf(value: string, stderr: NodeJS.WritableStream): Date {
  const date = new Date(value);
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(date.getTime())) {
    stderr.write(`wharf: --since must be an RFC 3339 time like 2026-11-20T00:00:00Z (got "${value}")\n`);
    throw new CommandExit(EXIT.usage);
  }
  return date;
}

/**
 * Webhook redelivery verbs (ADR 0049): `wharf events deliveries redeliver <uid>`,
 * `wharf events subscriptions redrive <uid>` and `wharf events subscriptions replay <uid> --since`.
 */
export function registerEventsRedelivery(subs: Command, deliveries: Command, bind: Bind): void {
  deliveries
    .command("redeliver <uid>")
    .description("send a delivered or given-up delivery again (same CloudEvent id); prints the new delivery")
    .action(
      bind(async (ctx, [uid]) => {
        const delivery = await ctx.client.events.subscriptions.redeliverDelivery({ uid });
        print(ctx, [delivery], redeliveryView, true);
      }),
    );
  subs
    .command("redrive <uid>")
    .description("send every dead letter of a subscription again")
    .action(
      bind(async (ctx, [uid]) => {
        const { requeued } = await ctx.client.events.subscriptions.redriveSubscription({ uid });
        ctx.stdout.write(`requeued ${requeued} deliveries\n`);
      }),
    );
  subs
    .command("replay <uid>")
    .description("send again every kept event of the subscription since a time (see --events-retention)")
    .requiredOption("--since <time>", "RFC 3339, e.g. 2026-11-20T00:00:00Z")
    .action(
      bind(async (ctx, [uid], o: { since: string }) => {
        const since = timestampFromDate(sinceOf(o.since, ctx.stderr));
        const { requeued } = await ctx.client.events.subscriptions.replaySubscription({ uid, since });
        ctx.stdout.write(`requeued ${requeued} deliveries\n`);
      }),
    );
}
