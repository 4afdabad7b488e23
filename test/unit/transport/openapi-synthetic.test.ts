import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  create,
  createFileRegistry,
  type DescFile,
  type DescMessage,
  setExtension,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_timestamp,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { file_google_api_annotations, http } from "../../../src/gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../../src/gen/google/api/http_pb.js";
import { file_google_rpc_status, StatusSchema } from "../../../src/gen/google/rpc/status_pb.js";
import {
  file_platform_annotations_iam,
  IAMSchema,
  iam,
} from "../../../src/gen/platform/annotations/iam_pb.js";
import { Capability } from "../../../src/gen/platform/capabilities/capabilities_pb.js";
import { buildOpenApiDocument } from "../../../src/transport/openapi-document.js";
import { protoComment } from "../../../src/transport/proto-comments.js";

const {
  STRING: TYPE_STRING,
  MESSAGE: TYPE_MESSAGE,
  ENUM: TYPE_ENUM,
  INT64: TYPE_INT64,
} = FieldDescriptorProto_Type;
const OPTIONAL = FieldDescriptorProto_Label.OPTIONAL;

const field = (name: string, number: number, type: FieldDescriptorProto_Type, typeName = "") => ({
  name,
  number,
  type,
  typeName,
  label: OPTIONAL,
  jsonName: name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), // as protoc and buf fill it
});

function methodOptions(path: string, auth: { disabled?: boolean; unscoped?: boolean }) {
  const options = create(MethodOptionsSchema);
  setExtension(options, http, create(HttpRuleSchema, { pattern: { case: "get", value: path } }));
  setExtension(
    options,
    iam,
    create(IAMSchema, { ...auth, capabilities: auth.unscoped ? [Capability.CAP_IAM_GROUPS_LIST] : [] }),
  );
  return options;
}

// A hand-built proto file with source info (as `buf build` gives the generator), with what the
// platform protos do not have yet: a recursive message, a nested message and enum, a literal in a
// path variable.
const proto = create(FileDescriptorProtoSchema, {
  name: "test/v1/things.proto",
  package: "test.v1",
  syntax: "proto3",
  dependency: [
    "google/protobuf/timestamp.proto",
    "google/api/annotations.proto",
    "platform/annotations/iam.proto",
  ],
  messageType: [
    {
      name: "Thing",
      field: [
        field("name", 1, TYPE_STRING),
        field("parent", 2, TYPE_MESSAGE, ".test.v1.Thing"),
        field("part", 3, TYPE_MESSAGE, ".test.v1.Thing.Part"),
        field("state", 4, TYPE_ENUM, ".test.v1.Thing.State"),
        field("byte_count", 5, TYPE_INT64),
        field("create_time", 6, TYPE_MESSAGE, ".google.protobuf.Timestamp"),
      ],
      nestedType: [{ name: "Part", field: [field("note", 1, TYPE_STRING)] }],
      enumType: [
        {
          name: "State",
          value: [
            { name: "STATE_UNSPECIFIED", number: 0 },
            { name: "STATE_READY", number: 1 },
          ],
        },
      ],
    },
    { name: "GetThingRequest", field: [field("name", 1, TYPE_STRING)] },
  ],
  service: [
    {
      name: "ThingsService",
      method: [
        {
          name: "GetThing",
          inputType: ".test.v1.GetThingRequest",
          outputType: ".test.v1.Thing",
          options: methodOptions("/test/v1/{name=projects/*}/thing", { disabled: true }),
        },
        {
          name: "ListThings",
          inputType: ".test.v1.GetThingRequest",
          outputType: ".test.v1.Thing",
          options: methodOptions("/test/v1/things", { unscoped: true }),
        },
      ],
    },
  ],
  sourceCodeInfo: {
    location: [
      { path: [4, 0], leadingComments: " A thing.\n buf:lint:ignore X\n" },
      { path: [4, 0, 2, 0], leadingComments: " The thing's name.\n", trailingComments: " Unique.\n" },
      { path: [4, 0, 3, 0], leadingComments: " A part of a thing.\n" },
      { path: [4, 0, 3, 0, 2, 0], leadingComments: " What the part is for.\n" },
      { path: [4, 0, 4, 0, 2, 1], leadingComments: " Ready to use.\n" },
      { path: [6, 0], leadingComments: " Things and their parts.\n" },
      { path: [6, 0, 2, 0], leadingComments: " Gets one thing.\n" },
    ],
  },
});

const known = new Map<string, DescFile>([
  ["google/protobuf/timestamp.proto", file_google_protobuf_timestamp],
  ["google/api/annotations.proto", file_google_api_annotations],
  ["platform/annotations/iam.proto", file_platform_annotations_iam],
  ["google/rpc/status.proto", file_google_rpc_status],
]);
const registry = createFileRegistry(proto, (name) => known.get(name));
const thing = registry.getMessage("test.v1.Thing") as DescMessage;
const doc = buildOpenApiDocument({
  services: [registry.getService("test.v1.ThingsService")!],
  status: StatusSchema,
  errorDetails: [],
  title: "t",
  version: "1",
  description: "d",
}) as {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; description: string }[];
        security?: unknown[];
        description: string;
        "x-wharf-capabilities"?: string[];
      }
    >
  >;
  components: {
    schemas: Record<string, { description?: string; properties?: Record<string, Record<string, unknown>> }>;
  };
  tags: { name: string; description: string }[];
};

describe("the OpenAPI generator on a hand-built proto file", () => {
  it("reads comments of messages, fields, nested declarations, enum values, services and RPCs", () => {
    assert.equal(protoComment(thing), "A thing.", "lint directives dropped");
    assert.equal(protoComment(thing.fields[0]!), "The thing's name.\n\nUnique.", "leading then trailing");
    assert.equal(protoComment(thing.nestedMessages[0]!), "A part of a thing.");
    assert.equal(protoComment(thing.nestedMessages[0]!.fields[0]!), "What the part is for.");
    assert.equal(protoComment(thing.nestedEnums[0]!.values[1]!), "Ready to use.");
    assert.equal(protoComment(thing.fields[1]!), "", "no comment");
    assert.deepEqual(doc.tags, [{ name: "test.v1.ThingsService", description: "Things and their parts." }]);
  });

  it("writes comments, enums, int64, Timestamps and a recursive message as schemas", () => {
    const schema = doc.components.schemas["test.v1.Thing"]!;
    assert.equal(schema.description, "A thing.");
    assert.deepEqual(schema.properties?.parent, { $ref: "#/components/schemas/test.v1.Thing" });
    assert.deepEqual(schema.properties?.byteCount, {
      type: "string",
      format: "int64",
      pattern: "^-?[0-9]+$",
    });
    assert.deepEqual(schema.properties?.createTime, { type: "string", format: "date-time" });
    assert.deepEqual(doc.components.schemas["test.v1.Thing.State"], {
      type: "string",
      enum: ["STATE_UNSPECIFIED", "STATE_READY"],
      description: "- `STATE_UNSPECIFIED`\n- `STATE_READY`: Ready to use.",
    });
    assert.equal(doc.components.schemas["test.v1.Thing.Part"]?.description, "A part of a thing.");
  });

  it("keeps a variable's literal form, and security per the IAM option", () => {
    const get = doc.paths["/test/v1/{name}/thing"]?.get;
    assert.ok(get, Object.keys(doc.paths).join(", "));
    assert.match(get.parameters?.[0]?.description ?? "", /Has the form `projects\/\*`/);
    assert.deepEqual(get.security, [], "IAM-disabled: no token");
    assert.match(get.description, /^Gets one thing\.\n\n\*\*Authorization:\*\* none/);
    const list = doc.paths["/test/v1/things"]?.get;
    assert.equal(list?.security, undefined, "the document's bearer requirement");
    assert.deepEqual(list?.["x-wharf-capabilities"], ["CAP_IAM_GROUPS_LIST"]);
    assert.deepEqual(
      list?.parameters?.map((p) => p.name),
      ["name"],
    );
  });
});
