import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_field_mask,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  timestampDate,
} from "@bufbuild/protobuf/wkt";
import { DomainError } from "../../../src/core/errors.js";
import { ListReposRequestSchema } from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { applyQueryParams, compileQueryFields } from "../../../src/transport/query-params.js";

/** A request message with one field of every kind a query parameter can set. */
function testRequest(): DescMessage {
  const field = (name: string, number: number, type: Type, extra: Record<string, unknown> = {}) => ({
    name,
    number,
    type,
    label: Label.OPTIONAL,
    jsonName: name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
    ...extra,
  });
  const fdp = create(FileDescriptorProtoSchema, {
    name: "test/query.proto",
    package: "test",
    syntax: "proto3",
    dependency: [
      "google/protobuf/timestamp.proto",
      "google/protobuf/field_mask.proto",
      "google/protobuf/wrappers.proto",
    ],
    enumType: [
      {
        name: "Color",
        value: [
          { name: "COLOR_UNSPECIFIED", number: 0 },
          { name: "COLOR_RED", number: 1 },
        ],
      },
    ],
    messageType: [
      { name: "Filter", field: [field("descendants_of", 1, Type.STRING), field("in_root", 2, Type.BOOL)] },
      {
        name: "Request",
        field: [
          field("page_size", 1, Type.INT32),
          field("big", 2, Type.INT64),
          field("count", 3, Type.UINT32),
          field("ratio", 4, Type.DOUBLE),
          field("flag", 5, Type.BOOL),
          field("color", 6, Type.ENUM, { typeName: ".test.Color" }),
          field("since", 7, Type.MESSAGE, { typeName: ".google.protobuf.Timestamp" }),
          field("update_mask", 8, Type.MESSAGE, { typeName: ".google.protobuf.FieldMask" }),
          field("names", 9, Type.STRING, { label: Label.REPEATED }),
          field("colors", 10, Type.ENUM, { label: Label.REPEATED, typeName: ".test.Color" }),
          field("uidp", 11, Type.MESSAGE, { typeName: ".test.Filter" }),
          field("raw", 12, Type.BYTES),
          field("maybe", 13, Type.MESSAGE, { typeName: ".google.protobuf.Int32Value" }),
          field("body", 14, Type.MESSAGE, { typeName: ".test.Filter" }),
        ],
      },
    ],
  });
  const deps = [
    file_google_protobuf_timestamp,
    file_google_protobuf_field_mask,
    file_google_protobuf_wrappers,
  ];
  const registry = createFileRegistry(fdp, (name) => deps.find((f) => f.proto.name === name));
  return registry.getMessage("test.Request")!;
}

const desc = testRequest();
const fields = compileQueryFields(desc, (path) => path === "body" || path.startsWith("body."));

function apply(query: string): Record<string, unknown> {
  const message = create(desc);
  applyQueryParams(fields, query, reflect(desc, message));
  return message as unknown as Record<string, unknown>;
}

function violations(query: string): Array<{ field: string; description: string }> {
  try {
    apply(query);
  } catch (err) {
    assert.ok(err instanceof DomainError);
    assert.equal(err.code, 3);
    return err.details.fieldViolations ?? [];
  }
  assert.fail(`expected INVALID_ARGUMENT for ${query}`);
}

describe("query parameters", () => {
  it("accept snake_case and lowerCamelCase keys, nested by dots", () => {
    assert.equal(apply("page_size=5").pageSize, 5);
    assert.equal(apply("pageSize=7").pageSize, 7);
    const a = apply("uidp.descendants_of=abc&uidp.inRoot=true").uidp as Record<string, unknown>;
    assert.deepEqual([a.descendantsOf, a.inRoot], ["abc", true]);
    const b = apply("uidp.descendantsOf=x").uidp as Record<string, unknown>;
    assert.equal(b.descendantsOf, "x");
  });

  it("coerce by field type", () => {
    const m = apply("big=-9007199254740993&count=42&ratio=2.5&flag=1&color=COLOR_RED&raw=aGk%3D&maybe=3");
    assert.equal(m.big, -9007199254740993n);
    assert.equal(m.count, 42);
    assert.equal(m.ratio, 2.5);
    assert.equal(m.flag, true);
    assert.equal(m.color, 1);
    assert.deepEqual(m.raw, new Uint8Array([104, 105]));
    assert.equal(m.maybe, 3);
    assert.equal(apply("color=1").color, 1, "enum by number");
    assert.equal(apply("flag=FALSE").flag, false);
  });

  it("read Timestamp as RFC 3339 and FieldMask as a camel or snake comma list", () => {
    const m = apply("since=2026-01-28T12:54:21.189Z&updateMask=description,createTime,claim_match.issuer");
    assert.equal(timestampDate(m.since as never).toISOString(), "2026-01-28T12:54:21.189Z");
    assert.deepEqual((m.updateMask as { paths: string[] }).paths, [
      "description",
      "create_time",
      "claim_match.issuer",
    ]);
    assert.deepEqual((apply("update_mask=*").updateMask as { paths: string[] }).paths, ["*"]);
  });

  it("collect repeated fields from repeated keys", () => {
    const m = apply("names=a&names=b&colors=COLOR_RED&colors=0");
    assert.deepEqual(m.names, ["a", "b"]);
    assert.deepEqual(m.colors, [1, 0]);
  });

  it("report every bad value as a violation naming the key as given", () => {
    assert.deepEqual(violations("page_size=ten"), [
      { field: "page_size", description: '"ten" is not an integer' },
    ]);
    assert.equal(violations("pageSize=1.5")[0]?.field, "pageSize");
    assert.equal(violations("page_size=99999999999")[0]?.field, "page_size");
    assert.equal(violations("count=-1")[0]?.field, "count");
    assert.equal(violations("big=1e3")[0]?.field, "big");
    assert.equal(violations("flag=yes")[0]?.field, "flag");
    assert.equal(violations("color=COLOR_BLUE")[0]?.field, "color");
    assert.equal(violations("color=7")[0]?.field, "color");
    assert.equal(violations("since=yesterday")[0]?.field, "since");
    assert.equal(violations("ratio=abc")[0]?.field, "ratio");
    assert.equal(violations("raw=!!")[0]?.field, "raw");
    assert.deepEqual(
      violations("colour=red&page_size=x").map((v) => v.field),
      ["colour", "page_size"],
    );
  });

  it("reject unknown keys, excluded fields, non-leaf messages and repeated singular keys", () => {
    assert.deepEqual(violations("colour=red"), [{ field: "colour", description: "unknown query parameter" }]);
    assert.equal(violations("body.in_root=true")[0]?.field, "body.in_root", "bound by the body");
    assert.equal(violations("uidp=x")[0]?.field, "uidp");
    assert.equal(violations("page_size=1&pageSize=2")[0]?.field, "pageSize");
  });

  it("work on a generated request (ListReposRequest)", () => {
    const list = compileQueryFields(ListReposRequestSchema, () => false);
    const message = create(ListReposRequestSchema);
    const set = applyQueryParams(
      list,
      "uidp.descendants_of=o&page_size=10&order_by=name%20desc",
      reflect(ListReposRequestSchema, message),
    );
    assert.deepEqual([...set].sort(), ["order_by", "page_size", "uidp.descendants_of"]);
    assert.equal(message.uidp?.descendantsOf, "o");
    assert.equal(message.orderBy, "name desc");
    assert.ok(list.has("uidp.descendantsOf") && list.has("pageToken") && list.has("uidp.ids"));
  });
});
