import { create, type DescField, type DescMessage, type Message, ScalarType } from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { DurationSchema, FieldMaskSchema, TimestampSchema, timestampFromDate } from "@bufbuild/protobuf/wkt";

const MAX_DEPTH = 4;

/**
 * A message with every field set to a representative value (the first member of each oneof, one
 * item per list, one entry per map, messages nested up to 4 levels), for checking that its protojson
 * matches a schema. `google.protobuf.Any`, Struct and Value fields are left unset.
 */
export function sampleMessage(desc: DescMessage): Message {
  return fill(desc, 0).message;
}

function fill(desc: DescMessage, depth: number): ReflectMessage {
  const target = reflect(desc, create(desc));
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return reflect(TimestampSchema, timestampFromDate(new Date("2026-01-02T03:04:05.678Z")));
    case "google.protobuf.Duration":
      return reflect(DurationSchema, create(DurationSchema, { seconds: 90n, nanos: 500_000_000 }));
    case "google.protobuf.FieldMask":
      return reflect(FieldMaskSchema, create(FieldMaskSchema, { paths: ["display_name", "labels"] }));
  }
  for (const field of desc.fields) {
    if (field.oneof && field.oneof.fields[0] !== field) continue;
    const value = sampleValue(field, depth);
    if (value === undefined) continue;
    if (field.fieldKind === "list") {
      const list = target.get(field);
      list.add(value);
    } else if (field.fieldKind === "map") {
      target.get(field).set(mapKey(field), value);
    } else {
      target.set(field, value);
    }
  }
  return target;
}

const UNSAMPLED = new Set(["google.protobuf.Any", "google.protobuf.Struct", "google.protobuf.Value"]);

function sampleValue(field: DescField, depth: number): unknown {
  const kind =
    field.fieldKind === "list" ? field.listKind : field.fieldKind === "map" ? field.mapKind : field.fieldKind;
  switch (kind) {
    case "scalar":
      return scalarSample((field as { scalar: ScalarType }).scalar, field.name);
    case "enum": {
      const values = (field as { enum: { values: { number: number }[] } }).enum.values;
      return values[values.length - 1]!.number;
    }
    case "message": {
      const message = (field as { message: DescMessage }).message;
      if (UNSAMPLED.has(message.typeName) || depth >= MAX_DEPTH) return undefined;
      return fill(message, depth + 1);
    }
  }
  return undefined;
}

function scalarSample(type: ScalarType, name: string): unknown {
  switch (type) {
    case ScalarType.STRING:
      return `sample-${name}`;
    case ScalarType.BOOL:
      return true;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return -9007199254740993n; // beyond 2^53: only a string keeps it exact
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return 18446744073709551615n;
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return 1.5;
    case ScalarType.BYTES:
      return new Uint8Array([0xfb, 0xff, 0x01]);
    default:
      return 7;
  }
}

function mapKey(field: DescField & { fieldKind: "map" }): unknown {
  switch (field.mapKey) {
    case ScalarType.STRING:
      return "key";
    case ScalarType.BOOL:
      return true;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return 3n;
    default:
      return 3;
  }
}
