// The messages, enums and schemas of the security advisory domain (v2).
export * from "../../gen/platform/advisory/v2/security_advisory_pb.js";
