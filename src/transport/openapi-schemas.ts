import { type DescEnum, type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { protoComment } from "./proto-comments.js";

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it), as plain JSON. */
export type JsonSchema = { [key: string]: unknown };

/** Where the document's schemas live: `#/components/schemas/<full proto name>`. */
export const SCHEMA_REF_PREFIX = "#/components/schemas/";

/**
 * Collects the schemas of the protobuf JSON mapping (protojson, as `toJson` writes and `fromJson`
 * reads): messages and enums become named components, referenced by `$ref`; well-known types are
 * written inline as their JSON forms (Timestamp and Duration as strings, FieldMask as a comma
 * list, wrappers as their value, Struct/Value as any JSON). Only what is referenced is collected.
 */
export interface SchemaCollector {
  /** The schema of a field's JSON value (list and map fields included), with its comment. */
  field(field: DescField): JsonSchema;
  /** A `$ref` to a message's schema (collecting it), or its inline form for a well-known type. */
  message(desc: DescMessage): JsonSchema;
  /** Every collected component, by name, sorted by name. */
  components(): Record<string, JsonSchema>;
}

/** Creates an empty {@link SchemaCollector}. */
export function createSchemaCollector(): SchemaCollector {
  const components = new Map<string, JsonSchema>();

  const ref = (name: string, build: () => JsonSchema): JsonSchema => {
    if (!components.has(name)) {
      components.set(name, {}); // placeholder first: messages may refer to themselves
      components.set(name, build());
    }
    return { $ref: `${SCHEMA_REF_PREFIX}${name}` };
  };

  const message = (desc: DescMessage): JsonSchema =>
    wellKnownSchema(desc) ?? ref(desc.typeName, () => messageSchema(desc));

  const enumRef = (desc: DescEnum): JsonSchema =>
    desc.typeName === "google.protobuf.NullValue"
      ? { type: "null" }
      : ref(desc.typeName, () => enumSchema(desc));

  const jsonValueSchema = (field: DescField): JsonSchema => {
    switch (field.fieldKind) {
      case "scalar":
        return scalarSchema(field.scalar);
      case "enum":
        return enumRef(field.enum);
      case "message":
        return message(field.message);
      case "list": {
        const items =
          field.listKind === "scalar"
            ? scalarSchema(field.scalar)
            : field.listKind === "enum"
              ? enumRef(field.enum)
              : message(field.message);
        return { type: "array", items };
      }
      case "map": {
        const values =
          field.mapKind === "scalar"
            ? scalarSchema(field.scalar)
            : field.mapKind === "enum"
              ? enumRef(field.enum)
              : message(field.message);
        return { type: "object", additionalProperties: values };
      }
    }
  };

  const fieldSchema = (field: DescField): JsonSchema => {
    const schema = { ...jsonValueSchema(field) };
    const notes: string[] = [];
    const comment = protoComment(field);
    if (comment) notes.push(comment);
    if (field.oneof) {
      const others = field.oneof.fields.filter((f) => f !== field).map((f) => `\`${f.jsonName}\``);
      if (others.length > 0) notes.push(`One of \`${field.oneof.name}\`: not with ${others.join(", ")}.`);
    }
    if (notes.length > 0) schema.description = notes.join("\n\n");
    if (field.deprecated) schema.deprecated = true;
    return schema;
  };

  const messageSchema = (desc: DescMessage): JsonSchema => {
    const properties: Record<string, JsonSchema> = {};
    for (const field of desc.fields) properties[field.jsonName] = fieldSchema(field);
    const schema: JsonSchema = { type: "object", properties };
    const comment = protoComment(desc);
    if (comment) schema.description = comment;
    return schema;
  };

  return {
    field: fieldSchema,
    message,
    components() {
      return Object.fromEntries([...components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    },
  };
}

/** Enums are their value names in JSON; each value's comment is listed in the description. */
function enumSchema(desc: DescEnum): JsonSchema {
  const lines = desc.values.map((v) => {
    const comment = protoComment(v).replace(/\s*\n\s*/g, " ");
    return comment ? `- \`${v.name}\`: ${comment}` : `- \`${v.name}\``;
  });
  const intro = protoComment(desc);
  return {
    type: "string",
    enum: desc.values.map((v) => v.name),
    description: [intro, lines.join("\n")].filter((s) => s !== "").join("\n\n"),
  };
}

const INT64_PATTERN = "^-?[0-9]+$";

/** The protojson form of a scalar: 64-bit integers as decimal strings, bytes as base64. */
function scalarSchema(type: ScalarType): JsonSchema {
  switch (type) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "uint32", minimum: 0 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "string", format: "int64", pattern: INT64_PATTERN };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", format: "uint64", pattern: "^[0-9]+$" };
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return {
        anyOf: [{ type: "number" }, { type: "string", enum: ["NaN", "Infinity", "-Infinity"] }],
        format: type === ScalarType.FLOAT ? "float" : "double",
      };
    case ScalarType.BYTES:
      return { type: "string", format: "byte", contentEncoding: "base64" };
  }
}

/** The inline JSON form of a google.protobuf well-known type, or undefined for other messages. */
function wellKnownSchema(desc: DescMessage): JsonSchema | undefined {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return { type: "string", format: "date-time" };
    case "google.protobuf.Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$", examples: ["3600s", "1.5s"] };
    case "google.protobuf.FieldMask":
      return { type: "string", description: "Comma-separated field paths (`displayName,labels`)." };
    case "google.protobuf.Empty":
      return { type: "object", additionalProperties: false };
    case "google.protobuf.Struct":
      return { type: "object" };
    case "google.protobuf.Value":
      return {};
    case "google.protobuf.ListValue":
      return { type: "array" };
    case "google.protobuf.Any":
      return {
        type: "object",
        properties: { "@type": { type: "string", description: "The packed message's type URL." } },
        required: ["@type"],
      };
    case "google.protobuf.DoubleValue":
    case "google.protobuf.FloatValue":
      return scalarSchema(ScalarType.DOUBLE);
    case "google.protobuf.Int64Value":
      return scalarSchema(ScalarType.INT64);
    case "google.protobuf.UInt64Value":
      return scalarSchema(ScalarType.UINT64);
    case "google.protobuf.Int32Value":
      return scalarSchema(ScalarType.INT32);
    case "google.protobuf.UInt32Value":
      return scalarSchema(ScalarType.UINT32);
    case "google.protobuf.BoolValue":
      return scalarSchema(ScalarType.BOOL);
    case "google.protobuf.StringValue":
      return scalarSchema(ScalarType.STRING);
    case "google.protobuf.BytesValue":
      return scalarSchema(ScalarType.BYTES);
  }
  return undefined;
}
