// The messages, enums and schemas of the events domain (v2).
export * from "../../gen/platform/events/v2/subscriptions_pb.js";
