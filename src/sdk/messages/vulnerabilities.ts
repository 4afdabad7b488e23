// The messages, enums and schemas of the vulnerabilities domain (v2).
export * from "../../gen/platform/vulnerabilities/v2/advisories_pb.js";
