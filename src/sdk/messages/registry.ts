// The messages, enums and schemas of the registry domain (v2).
export * from "../../gen/platform/registry/v2/images_pb.js";
export * from "../../gen/platform/registry/v2/immutability_pb.js";
export * from "../../gen/platform/registry/v2/insights_pb.js";
export * from "../../gen/platform/registry/v2/policies_pb.js";
export * from "../../gen/platform/registry/v2/quotas_pb.js";
export * from "../../gen/platform/registry/v2/replication_pb.js";
export * from "../../gen/platform/registry/v2/repos_pb.js";
export * from "../../gen/platform/registry/v2/retention_pb.js";
export * from "../../gen/platform/registry/v2/sbom_pb.js";
export * from "../../gen/platform/registry/v2/search_pb.js";
export * from "../../gen/platform/registry/v2/signing_keys_pb.js";
export * from "../../gen/platform/registry/v2/tags_pb.js";
export * from "../../gen/platform/registry/v2/upstreams_pb.js";
