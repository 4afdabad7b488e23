import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { PingService } from "../../../src/gen/platform/ping/v2/ping_pb.js";
import { ReposService } from "../../../src/gen/platform/registry/v2/repos_pb.js";
import {
  createReflectionIndex,
  type ReflectionAnswer,
  type ReflectionRequestLike,
} from "../../../src/transport/reflection-index.js";

const index = createReflectionIndex([PingService, ReposService]);
const ask = (messageRequest: ReflectionRequestLike["messageRequest"], sent = new Set<string>()) =>
  index.answer({ host: "", messageRequest }, sent);
const fileNames = (answer: ReflectionAnswer): string[] => {
  assert.equal(answer.case, "fileDescriptorResponse", JSON.stringify(answer));
  return answer.case === "fileDescriptorResponse"
    ? answer.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name)
    : [];
};

describe("reflection index", () => {
  it("lists the services", () => {
    assert.deepEqual(ask({ case: "listServices", value: "" }), {
      case: "listServicesResponse",
      value: {
        service: [{ name: "platform.ping.v2.PingService" }, { name: "platform.registry.v2.ReposService" }],
      },
    });
  });

  it("answers a file by its .proto name with its transitive dependencies", () => {
    const names = fileNames(ask({ case: "fileByFilename", value: "platform/registry/v2/repos.proto" }));
    assert.equal(names[0], "platform/registry/v2/repos.proto");
    for (const dep of [
      "google/api/annotations.proto",
      "google/api/http.proto",
      "google/protobuf/descriptor.proto",
      "google/protobuf/timestamp.proto",
      "platform/annotations/iam.proto",
      "platform/capabilities/capabilities.proto",
      "platform/common/v2/uidp.proto",
    ]) {
      assert.ok(names.includes(dep), `${dep} in ${names.join(", ")}`);
    }
    assert.equal(new Set(names).size, names.length, "no file twice");
  });

  it("finds files by service, method, message, field and enum symbols", () => {
    const symbols = [
      ["platform.registry.v2.ReposService", "platform/registry/v2/repos.proto"],
      ["platform.registry.v2.ReposService.GetRepo", "platform/registry/v2/repos.proto"],
      ["platform.registry.v2.Repo", "platform/registry/v2/repos.proto"],
      ["platform.registry.v2.Repo.name", "platform/registry/v2/repos.proto"],
      ["platform.capabilities.Capability", "platform/capabilities/capabilities.proto"],
      ["google.protobuf.Timestamp", "google/protobuf/timestamp.proto"],
    ];
    for (const [symbol, file] of symbols) {
      assert.equal(fileNames(ask({ case: "fileContainingSymbol", value: symbol! }))[0], file, symbol);
    }
  });

  it("does not resend dependencies already sent on the same stream", () => {
    const sent = new Set<string>();
    const first = fileNames(ask({ case: "fileContainingSymbol", value: "platform.registry.v2.Repo" }, sent));
    assert.ok(first.length > 1);
    assert.deepEqual(
      fileNames(ask({ case: "fileContainingSymbol", value: "platform.ping.v2.PingService" }, sent)),
      ["platform/ping/v2/ping.proto"],
    );
    assert.deepEqual(
      fileNames(ask({ case: "fileByFilename", value: "platform/registry/v2/repos.proto" }, sent)),
      ["platform/registry/v2/repos.proto"],
    );
  });

  it("answers extension queries for MethodOptions", () => {
    const numbers = ask({ case: "allExtensionNumbersOfType", value: "google.protobuf.MethodOptions" });
    assert.deepEqual(numbers, {
      case: "allExtensionNumbersResponse",
      value: { baseTypeName: "google.protobuf.MethodOptions", extensionNumber: [50101, 72295728] },
    });
    const file = ask({
      case: "fileContainingExtension",
      value: { containingType: "google.protobuf.MethodOptions", extensionNumber: 50101 },
    });
    assert.equal(fileNames(file)[0], "platform/annotations/iam.proto");
  });

  it("answers NOT_FOUND for unknown names and INVALID_ARGUMENT for an empty request", () => {
    const cases: ReflectionRequestLike["messageRequest"][] = [
      { case: "fileByFilename", value: "nope.proto" },
      { case: "fileContainingSymbol", value: "platform.Nope" },
      { case: "fileContainingSymbol", value: "platform.registry.v2.Repo.nope" },
      { case: "allExtensionNumbersOfType", value: "platform.Nope" },
      {
        case: "fileContainingExtension",
        value: { containingType: "google.protobuf.MethodOptions", extensionNumber: 1 },
      },
    ];
    for (const request of cases) {
      const answer = ask(request);
      assert.equal(answer.case, "errorResponse");
      assert.equal(answer.case === "errorResponse" && answer.value.errorCode, 5);
    }
    const empty = ask({ case: undefined });
    assert.equal(empty.case === "errorResponse" && empty.value.errorCode, 3);
  });
});
