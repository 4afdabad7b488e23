// The messages, enums and schemas of the libraries domain (v2).
export * from "../../gen/platform/libraries/v2/artifacts_pb.js";
