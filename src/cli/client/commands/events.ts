import type { Command } from "commander";
import { DeliverySchema, SubscriptionSchema } from "../../../gen/platform/events/v2/subscriptions_pb.js";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import { listAll } from "../../../sdk/pages.js";
import { EVENTS_SERVICES } from "../../../sdk/services/events.js";
import { timeCell } from "../output.js";
import { type BindFor, print, subcommand } from "../program.js";
import { groupUid } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";
import { registerDeliveriesWait } from "./deliveries-wait.js";
import { registerEventsRedelivery } from "./events-redelivery.js";

const subscriptionView = protoView(SubscriptionSchema, [
  field("UID", "uid"),
  field("SINK", "sink"),
  { header: "PENDING", cell: (s) => String(s.status?.pending ?? 0n) },
  { header: "FAILED", cell: (s) => String(s.status?.failed ?? 0n) },
  { header: "CREATED", cell: (s) => timeCell(s.createTime) },
]);

const deliveryView = protoView(
  DeliverySchema,
  [
    field("UID", "uid"),
    field("STATE", "state"),
    field("EVENT", "eventType"),
    field("SUBJECT", "eventSubject"),
    field("ATTEMPTS", "attempts"),
    { header: "LAST STATUS", cell: (d) => (d.lastStatus ? String(d.lastStatus) : "") },
    field("LAST ERROR", "lastError"),
    { header: "LAST ATTEMPT", cell: (d) => timeCell(d.lastAttemptTime) },
  ],
  (d) => d.eventId,
);

/** The services `wharf events` calls (only these load: see leanClient). */
const SERVICES = { iam: { groups: GroupsService }, events: EVENTS_SERVICES };

/** `wharf events …`: webhook subscriptions and their deliveries. */
export function registerEvents(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const events = subcommand(program, "events", CLIENT_GROUPS.events);
  const subs = events.command("subscriptions").description("webhook subscriptions");
  subs
    .command("list")
    .description("list subscriptions")
    .option("--parent <group>", "only those of this organization or folder")
    .action(
      bind(async (ctx, _args, o: { parent?: string }) => {
        const request =
          typeof o.parent === "string"
            ? { uidp: { descendantsOf: await groupUid(ctx.client, o.parent) } }
            : {};
        const rows = [];
        for await (const s of listAll(ctx.client.events.subscriptions.listSubscriptions, request))
          rows.push(s);
        print(ctx, rows, subscriptionView);
      }),
    );
  subs
    .command("create")
    .description("send the events of a group to a webhook")
    .requiredOption("--parent <group>", "the organization or folder")
    .requiredOption("--sink <url>", "the webhook URL")
    .action(
      bind(async (ctx, _args, o: { parent: string; sink: string }) => {
        const created = await ctx.client.events.subscriptions.createSubscription({
          parent: await groupUid(ctx.client, o.parent),
          subscription: { sink: o.sink },
        });
        print(ctx, [created], subscriptionView, true);
      }),
    );
  subs
    .command("describe <uid>")
    .description("show a subscription and its delivery status")
    .action(
      bind(async (ctx, [uid]) =>
        print(ctx, [await ctx.client.events.subscriptions.getSubscription({ uid })], subscriptionView, true),
      ),
    );
  subs
    .command("delete <uid>")
    .description("delete a subscription")
    .action(
      bind(async (ctx, [uid]) => {
        await ctx.client.events.subscriptions.deleteSubscription({ uid });
        ctx.stderr.write(`deleted subscription ${uid}\n`);
      }),
    );
  const deliveries = events.command("deliveries").description("deliveries of a subscription");
  deliveries
    .command("list")
    .description("the deliveries still pending or given up on (--delivered: those delivered)")
    .requiredOption("--subscription <uid>", "the subscription")
    .option("--failed", "only the ones given up on")
    .option("--delivered", "only the delivered ones whose events are kept")
    .action(
      bind(async (ctx, _args, o: { subscription: string; failed?: boolean; delivered?: boolean }) => {
        const state = o.delivered ? "delivered" : o.failed ? "failed" : "";
        const request = { subscriptionUid: o.subscription, state };
        const rows = [];
        for await (const d of listAll(ctx.client.events.subscriptions.listDeliveries, request)) rows.push(d);
        print(ctx, rows, deliveryView);
      }),
    );
  registerDeliveriesWait(deliveries, bind);
  registerEventsRedelivery(subs, deliveries, bind);
}
