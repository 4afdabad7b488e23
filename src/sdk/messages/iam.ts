// The messages, enums and schemas of the IAM domain (v2), and the capabilities roles hold.

export * from "../../gen/platform/capabilities/capabilities_pb.js";
export * from "../../gen/platform/common/v2/uidp_pb.js";
export * from "../../gen/platform/iam/v2/account_associations_pb.js";
export * from "../../gen/platform/iam/v2/external_group_role_mappings_pb.js";
export * from "../../gen/platform/iam/v2/group_invites_pb.js";
export * from "../../gen/platform/iam/v2/groups_pb.js";
export * from "../../gen/platform/iam/v2/identities_pb.js";
export * from "../../gen/platform/iam/v2/identity_providers_pb.js";
export * from "../../gen/platform/iam/v2/role_bindings_pb.js";
export * from "../../gen/platform/iam/v2/roles_pb.js";
export * from "../../gen/platform/iam/v2/terms_pb.js";
