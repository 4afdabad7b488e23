// Test support for the compiled encoders: a schema with every kind of field, and random messages.
import {
  createFileRegistry,
  type DescMessage,
  fromJson,
  type JsonObject,
  type JsonValue,
  type Message,
  ScalarType,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_google_protobuf_wrappers,
  TimestampSchema,
} from "@bufbuild/protobuf/wkt";

const SCALARS = [
  "double",
  "float",
  "int64",
  "uint64",
  "int32",
  "fixed64",
  "fixed32",
  "bool",
  "string",
  "bytes",
  "uint32",
  "sfixed32",
  "sfixed64",
  "sint32",
  "sint64",
];

const scalarFields = (prefix: string, first: number, label: string, extra: object = {}) =>
  SCALARS.map((t, i) => ({
    name: `${prefix}_${t}`,
    number: first + i,
    label,
    type: `TYPE_${t.toUpperCase()}`,
    ...extra,
  }));

const optionalFields = SCALARS.map((t, i) => ({
  name: `opt_${t}`,
  number: 21 + i,
  label: "LABEL_OPTIONAL",
  type: `TYPE_${t.toUpperCase()}`,
  oneofIndex: 1 + i,
  proto3Optional: true,
}));

const mapEntry = (name: string, key: string, value: object) => ({
  name,
  field: [
    { name: "key", number: 1, label: "LABEL_OPTIONAL", type: key },
    { name: "value", number: 2, label: "LABEL_OPTIONAL", ...value },
  ],
  options: { mapEntry: true },
});

const message = (name: string, typeName: string, number: number, label = "LABEL_OPTIONAL", extra = {}) => ({
  name,
  number,
  label,
  type: "TYPE_MESSAGE",
  typeName,
  ...extra,
});

/** codec.test: proto3 messages covering every field kind the encoders meet (JSON descriptor form). */
const TEST_FILE = {
  name: "codec/test.proto",
  package: "codec.test",
  syntax: "proto3",
  dependency: [
    "google/protobuf/timestamp.proto",
    "google/protobuf/wrappers.proto",
    "google/protobuf/struct.proto",
  ],
  enumType: [
    {
      name: "Color",
      value: [
        { name: "COLOR_UNSPECIFIED", number: 0 },
        { name: "COLOR_RED", number: 1 },
        { name: "COLOR_BLUE", number: -2 },
      ],
    },
  ],
  messageType: [
    {
      name: "Everything",
      field: [
        ...scalarFields("f", 1, "LABEL_OPTIONAL"),
        {
          name: "f_enum",
          number: 16,
          label: "LABEL_OPTIONAL",
          type: "TYPE_ENUM",
          typeName: ".codec.test.Color",
        },
        ...optionalFields,
        ...scalarFields("rep", 41, "LABEL_REPEATED"),
        {
          name: "rep_enum",
          number: 56,
          label: "LABEL_REPEATED",
          type: "TYPE_ENUM",
          typeName: ".codec.test.Color",
        },
        {
          name: "unpacked",
          number: 57,
          label: "LABEL_REPEATED",
          type: "TYPE_SINT32",
          options: { packed: false },
        },
        { name: "o_string", number: 70, label: "LABEL_OPTIONAL", type: "TYPE_STRING", oneofIndex: 0 },
        { name: "o_int64", number: 71, label: "LABEL_OPTIONAL", type: "TYPE_INT64", oneofIndex: 0 },
        message("o_msg", ".codec.test.Everything", 72, "LABEL_OPTIONAL", { oneofIndex: 0 }),
        {
          name: "o_enum",
          number: 73,
          label: "LABEL_OPTIONAL",
          type: "TYPE_ENUM",
          typeName: ".codec.test.Color",
          oneofIndex: 0,
        },
        message("o_time", ".google.protobuf.Timestamp", 74, "LABEL_OPTIONAL", { oneofIndex: 0 }),
        message("nested", ".codec.test.Everything", 80),
        message("nested_list", ".codec.test.Everything", 81, "LABEL_REPEATED"),
        message("time", ".google.protobuf.Timestamp", 82),
        message("times", ".google.protobuf.Timestamp", 83, "LABEL_REPEATED"),
        message("labels", ".codec.test.Everything.LabelsEntry", 90, "LABEL_REPEATED"),
        message("colors", ".codec.test.Everything.ColorsEntry", 91, "LABEL_REPEATED"),
        message("counts", ".codec.test.Everything.CountsEntry", 92, "LABEL_REPEATED"),
        {
          name: "text_id",
          number: 93,
          label: "LABEL_OPTIONAL",
          type: "TYPE_INT64",
          options: { jstype: "JS_STRING" },
        },
        message("fallbacks", ".codec.test.Fallbacks", 94),
        message("fallback_list", ".codec.test.Fallbacks", 95, "LABEL_REPEATED"),
        { name: "highest_number", number: 536_870_911, label: "LABEL_OPTIONAL", type: "TYPE_INT32" },
      ],
      oneofDecl: [{ name: "choice" }, ...SCALARS.map((t) => ({ name: `_opt_${t}` }))],
      nestedType: [
        mapEntry("LabelsEntry", "TYPE_STRING", { type: "TYPE_STRING" }),
        mapEntry("ColorsEntry", "TYPE_STRING", { type: "TYPE_ENUM", typeName: ".codec.test.Color" }),
        mapEntry("CountsEntry", "TYPE_STRING", { type: "TYPE_INT64" }),
      ],
    },
    {
      // Each field makes the message one the compiled encoders hand to protobuf-es.
      name: "Fallbacks",
      field: [
        message("by_id", ".codec.test.Fallbacks.ByIdEntry", 1, "LABEL_REPEATED"),
        message("name", ".google.protobuf.StringValue", 2),
        message("meta", ".google.protobuf.Struct", 3),
        message("inner", ".codec.test.Everything", 4),
        { name: "n", number: 5, label: "LABEL_OPTIONAL", type: "TYPE_INT32" },
      ],
      nestedType: [mapEntry("ByIdEntry", "TYPE_INT32", { type: "TYPE_STRING" })],
    },
  ],
};

const files = {
  "google/protobuf/timestamp.proto": file_google_protobuf_timestamp,
  "google/protobuf/wrappers.proto": file_google_protobuf_wrappers,
  "google/protobuf/struct.proto": file_google_protobuf_struct,
} as Record<string, typeof file_google_protobuf_struct | undefined>;

/** The registry of codec/test.proto; its messages are `codec.test.Everything` and `codec.test.Fallbacks`. */
export const testRegistry = createFileRegistry(
  fromJson(FileDescriptorProtoSchema, withJsonNames(TEST_FILE)),
  (name) => files[name],
);

/** protoc fills `json_name` of every field; protobuf-es relies on it. */
function withJsonNames(value: unknown): JsonValue {
  if (Array.isArray(value)) return value.map(withJsonNames);
  if (value === null || typeof value !== "object") return value as JsonValue;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) out[k] = withJsonNames(v);
  if (typeof out.name === "string" && typeof out.number === "number" && "label" in out) {
    out.jsonName = out.name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  }
  return out;
}

/** A message type of codec/test.proto by its simple name. */
export function testMessage(name: "Everything" | "Fallbacks"): DescMessage {
  const desc = testRegistry.getMessage(`codec.test.${name}`);
  if (!desc) throw new Error(`codec.test.${name} missing`);
  return desc;
}

/** A deterministic random source (LCG), so failures reproduce. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
}

const pick = <T>(random: () => number, values: readonly T[]): T =>
  values[Math.floor(random() * values.length)]!;

const LONG = "x".repeat(130);
const HUGE = "y".repeat(20_000);

function randomScalar(type: ScalarType, random: () => number, longAsString: boolean): unknown {
  const int64 = (values: bigint[]) => {
    const v = pick(random, values);
    return longAsString ? v.toString() : v;
  };
  const randomInt = (max: number) => Math.floor(random() * max);
  switch (type) {
    case ScalarType.DOUBLE:
      return pick(random, [
        0,
        -0,
        1.5,
        -1e300,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        random(),
      ]);
    case ScalarType.FLOAT:
      return pick(random, [
        0,
        -0,
        1.5,
        3.4028234663852886e38,
        Number.NaN,
        Number.NEGATIVE_INFINITY,
        Math.fround(random()),
      ]);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return pick(random, [0, 1, -1, 127, 128, 2_147_483_647, -2_147_483_648, randomInt(1e6) - 5e5]);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return pick(random, [0, 1, 127, 128, 16_384, 4_294_967_295, randomInt(4e9)]);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return int64([
        0n,
        1n,
        -1n,
        2n ** 63n - 1n,
        -(2n ** 63n),
        2n ** 53n,
        2n ** 53n - 1n,
        2n ** 53n + 1n,
        -(2n ** 53n),
        1_700_000_000n,
      ]);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return int64([0n, 1n, 2n ** 64n - 1n, 2n ** 53n, 2n ** 53n - 1n, 2n ** 32n, BigInt(randomInt(1e9))]);
    case ScalarType.BOOL:
      return random() < 0.5;
    case ScalarType.STRING:
      if (random() < 0.01) return HUGE;
      return pick(random, [
        "",
        "a",
        "héllo wörld",
        "😀 ✓",
        LONG,
        "x".repeat(42),
        "é".repeat(43),
        // The edges of the writer's ASCII path: its longest string, one more, ASCII then not.
        "z".repeat(127),
        "z".repeat(128),
        `${"a".repeat(60)}é`,
      ]);
    case ScalarType.BYTES:
      return Uint8Array.from({ length: pick(random, [0, 1, 3, 200]) }, () => randomInt(256));
  }
}

function randomTimestamp(random: () => number): ReflectMessage {
  const ts = reflect(TimestampSchema);
  ts.set(TimestampSchema.field.seconds, BigInt(Math.floor(random() * 4e9) - 1e9));
  ts.set(TimestampSchema.field.nanos, pick(random, [0, 1_000_000, 123_456_000, 999_999_999]));
  return ts;
}

/**
 * A random message of `desc`: each field set with some probability, to edge values included
 * (zero values in explicit-presence fields, extreme integers, NaN, long and non-ASCII strings).
 * Well-known wrapper and Struct fields are left unset; Timestamps are random valid ones.
 */
export function randomMessage(desc: DescMessage, random: () => number, depth = 0): Message {
  return randomReflect(desc, random, depth).message;
}

function randomReflect(desc: DescMessage, random: () => number, depth: number): ReflectMessage {
  const msg = reflect(desc);
  const value = (
    field: { scalar?: ScalarType; longAsString?: boolean },
    kind: string,
    target: DescMessage | undefined,
    enumValues: number[] | undefined,
  ) => {
    if (kind === "enum") return random() < 0.1 ? 7 : pick(random, enumValues!);
    if (kind === "message")
      return target!.typeName === TimestampSchema.typeName
        ? randomTimestamp(random)
        : randomReflect(target!, random, depth + 1);
    return randomScalar(field.scalar!, random, field.longAsString ?? false);
  };
  for (const field of desc.fields) {
    if (random() < 0.4) continue;
    switch (field.fieldKind) {
      case "scalar":
        msg.set(field, value(field, "scalar", undefined, undefined));
        break;
      case "enum":
        msg.set(
          field,
          value(
            field,
            "enum",
            undefined,
            field.enum.values.map((v) => v.number),
          ),
        );
        break;
      case "message":
        if (field.message.typeName.startsWith("google.protobuf.") && field.message !== TimestampSchema) break;
        if (depth < 2 || field.message === TimestampSchema)
          msg.set(field, value(field, "message", field.message, undefined));
        break;
      case "list": {
        if (field.listKind === "message" && depth >= 2 && field.message !== TimestampSchema) break;
        const list = msg.get(field);
        const n = pick(random, field.listKind === "message" && depth > 0 ? [0, 1, 2] : [0, 1, 3, 40]);
        const enumValues = field.listKind === "enum" ? field.enum.values.map((v) => v.number) : undefined;
        for (let i = 0; i < n; i++) {
          list.add(
            value(
              field,
              field.listKind,
              field.listKind === "message" ? field.message : undefined,
              enumValues,
            ) as never,
          );
        }
        break;
      }
      case "map": {
        const map = msg.get(field);
        for (let i = 0; i < pick(random, [0, 1, 3]); i++) {
          const key =
            field.mapKey === ScalarType.STRING
              ? pick(random, ["", "k", "ключ", `k${i}`, "10", "2"])
              : i * 7 - 3;
          const enumValues = field.mapKind === "enum" ? field.enum.values.map((v) => v.number) : undefined;
          const item =
            field.mapKind === "message"
              ? undefined
              : value({ scalar: field.scalar }, field.mapKind, undefined, enumValues);
          if (item !== undefined) map.set(key, item as never);
        }
        break;
      }
    }
  }
  return msg;
}
