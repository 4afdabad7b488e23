// The messages, enums and schemas of the audit domain (v2).
export * from "../../gen/platform/audit/v2/audit_pb.js";
