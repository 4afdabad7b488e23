import {
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type Message,
  type Registry,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import {
  fieldReader,
  isCompilable,
  type MessageObject,
  sortedFields,
  TIMESTAMP,
  unknownFieldsOf,
} from "./message-shape.js";
import { timestampToJson } from "./timestamp-json.js";

/** Writes one message as its protobuf JSON value (what `JSON.stringify` then turns into text). */
export type JsonEncoder = (message: Message) => JsonValue;

type ToJson = (value: unknown) => JsonValue;

/**
 * Creates protobuf JSON encoders equal to protobuf-es `toJson(schema, message, {registry})` with
 * default options (JSON names, enum names, implicit zero values omitted), compiled once per
 * message type. protobuf-es walks every message through its reflection API and formats each
 * Timestamp through `Date` (about 6 µs per list item here); a compiled encoder reads fields
 * directly. Message types it does not handle itself (see `isCompilable`), well-known types other
 * than Timestamp, and messages carrying unknown fields are handed to protobuf-es unchanged.
 */
export function createJsonEncoders(registry: Registry | undefined): (desc: DescMessage) => JsonEncoder {
  const options = registry ? { registry } : {};
  const compiled = new Map<DescMessage, ToJson>();

  function encoderOf(desc: DescMessage): ToJson {
    let encoder = compiled.get(desc);
    if (encoder === undefined) {
      // Registered before compiling, so recursive message types find it.
      let body: ToJson | undefined;
      encoder = (value) => body!(value);
      compiled.set(desc, encoder);
      body = compile(desc);
    }
    return encoder;
  }

  function compile(desc: DescMessage): ToJson {
    if (desc.typeName === TIMESTAMP) {
      return (value) => {
        const ts = value as { seconds: bigint; nanos: number };
        return timestampToJson(ts.seconds, ts.nanos);
      };
    }
    const fallback: ToJson = (value) => toJson(desc, value as Message, options);
    if (desc.typeName.startsWith("google.protobuf.") || !isCompilable(desc)) return fallback;
    const fields = sortedFields(desc).map((field) => ({
      key: field.jsonName,
      read: fieldReader(field),
      write: fieldToJson(field),
    }));
    return (value) => {
      const message = value as MessageObject;
      if (unknownFieldsOf(message)) return fallback(value); // may hold extensions the registry knows
      const out: JsonObject = {};
      for (const field of fields) {
        const v = field.read(message);
        if (v !== undefined) out[field.key] = field.write(v);
      }
      return out;
    };
  }

  function fieldToJson(field: DescField): ToJson {
    switch (field.fieldKind) {
      case "scalar":
        return scalarToJson(field.scalar);
      case "enum":
        return enumToJson(field.enum);
      case "message":
        return encoderOf(field.message);
      case "list": {
        const item =
          field.listKind === "scalar"
            ? scalarToJson(field.scalar)
            : field.listKind === "enum"
              ? enumToJson(field.enum)
              : encoderOf(field.message);
        return (value) => (value as unknown[]).map(item);
      }
      case "map": {
        const item = field.mapKind === "enum" ? enumToJson(field.enum) : scalarToJson(field.scalar!);
        return (value) => {
          const out: JsonObject = {};
          for (const [key, v] of Object.entries(value as object)) out[key] = item(v);
          return out;
        };
      }
    }
  }

  return (desc) => encoderOf(desc) as JsonEncoder;
}

function enumToJson(desc: DescEnum): ToJson {
  if (desc.typeName === "google.protobuf.NullValue") return () => null;
  // An unknown number (from a newer peer) is written as the number.
  return (value) => desc.value[value as number]?.name ?? (value as number);
}

function scalarToJson(type: ScalarType): ToJson {
  switch (type) {
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (value) => {
        const n = value as number;
        if (Number.isNaN(n)) return "NaN";
        if (n === Number.POSITIVE_INFINITY) return "Infinity";
        if (n === Number.NEGATIVE_INFINITY) return "-Infinity";
        return n;
      };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return (value) => String(value);
    case ScalarType.BYTES:
      return (value) => base64Encode(value as Uint8Array);
    default:
      // string, bool and the 32-bit integers are their own JSON.
      return (value) => value as JsonValue;
  }
}
