import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  create,
  createRegistry,
  type DescMessage,
  type DescService,
  fromBinary,
  type Message,
  type Registry,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { StringValueSchema, StructSchema } from "@bufbuild/protobuf/wkt";
import { binaryEncoderFor } from "../../../src/codec/binary-encoder.js";
import { createJsonEncoders } from "../../../src/codec/json-encoder.js";
import { GroupsService } from "../../../src/gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService } from "../../../src/gen/platform/iam/v2/identities_pb.js";
import { RoleBindingsService } from "../../../src/gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "../../../src/gen/platform/iam/v2/roles_pb.js";
import { PingService } from "../../../src/gen/platform/ping/v2/ping_pb.js";
import { ImagesService } from "../../../src/gen/platform/registry/v2/images_pb.js";
import { type Repo, RepoSchema, ReposService } from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { TagsService } from "../../../src/gen/platform/registry/v2/tags_pb.js";
import { errorDetailsRegistry } from "../../../src/transport/error-mapping.js";
import {
  randomMessage,
  seededRandom,
  testMessage,
  testRegistry,
} from "../../support/encoder-test-support.js";

/** Asserts both compiled encoders write exactly what protobuf-es writes for `message`. */
function assertSameAsProtobufEs(
  desc: DescMessage,
  message: Message,
  registry: Registry,
  label: string,
): void {
  const json = JSON.stringify(createJsonEncoders(registry)(desc)(message));
  assert.equal(json, toJsonString(desc, message, { registry }), `${label}: JSON`);
  const binary = binaryEncoderFor(desc)(message);
  assert.deepEqual(Buffer.from(binary), Buffer.from(toBinary(desc, message)), `${label}: binary`);
}

describe("compiled message encoders", () => {
  it("write every scalar, enum, list, oneof, map and nested field like protobuf-es", () => {
    const random = seededRandom(1);
    for (const name of ["Everything", "Fallbacks"] as const) {
      const desc = testMessage(name);
      for (let i = 0; i < 120; i++) {
        assertSameAsProtobufEs(desc, randomMessage(desc, random), testRegistry, `${name} #${i}`);
      }
    }
  });

  it("write every request and response message of the API like protobuf-es", () => {
    const services: DescService[] = [
      PingService,
      GroupsService,
      IdentitiesService,
      RolesService,
      RoleBindingsService,
      ReposService,
      TagsService,
      ImagesService,
    ];
    const registry = createRegistry(errorDetailsRegistry, ...services.map((s) => s.file));
    const random = seededRandom(2);
    for (const method of services.flatMap((s) => s.methods)) {
      for (const desc of [method.input, method.output]) {
        for (let i = 0; i < 40; i++)
          assertSameAsProtobufEs(desc, randomMessage(desc, random), registry, desc.typeName);
      }
    }
  });

  it("hand well-known wrapper and Struct fields to protobuf-es", () => {
    const desc = testMessage("Fallbacks");
    const message = reflect(desc);
    message.set(desc.field.name!, reflect(StringValueSchema, create(StringValueSchema, { value: "v" })));
    message.set(desc.field.meta!, reflect(StructSchema, create(StructSchema)));
    assertSameAsProtobufEs(desc, message.message, testRegistry, "wrappers");
    assert.match(JSON.stringify(createJsonEncoders(testRegistry)(desc)(message.message)), /"name":"v"/);
  });

  it("keep unknown fields in binary, as protobuf-es does", () => {
    const desc = testMessage("Everything");
    const random = seededRandom(3);
    const known = toBinary(desc, randomMessage(desc, random));
    // Field 1000 (varint 5) and field 1001 (length-delimited "hi") are not in the schema.
    const unknown = Uint8Array.from([0xc0, 0x3e, 0x05, 0xca, 0x3e, 0x02, 0x68, 0x69]);
    const message = fromBinary(desc, Buffer.concat([known, unknown]));
    assertSameAsProtobufEs(desc, message, testRegistry, "unknown fields");
  });

  it("write the same bytes twice in a row (the scratch buffer is reset), after any headroom", () => {
    const repo: Repo = create(RepoSchema, { uid: "a/b", name: "x".repeat(300), description: "d" });
    const encode = binaryEncoderFor(RepoSchema);
    const expected = Buffer.from(toBinary(RepoSchema, repo));
    assert.deepEqual(encode(repo), expected);
    assert.deepEqual(encode(repo), expected);
    assert.deepEqual(encode(repo, 5).subarray(5), expected);
    assert.equal(encode(repo, 5).length, expected.length + 5);
  });
});
