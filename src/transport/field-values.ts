import {
  create,
  type DescEnum,
  type DescField,
  type DescMessage,
  fromJson,
  ScalarType,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { FieldMaskSchema, isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { toSnake } from "../core/field-mask.js";

/** Thrown by a {@link LeafDecoder} for a value it cannot read; `message` describes the problem. */
export class FieldValueError extends Error {
  override name = "FieldValueError";
}

/**
 * Turns one text value (a path variable or a query parameter) into the reflection value of a field
 * (number, bigint, boolean, string, bytes, enum number, or a ReflectMessage for a well-known type).
 * Throws {@link FieldValueError} for bad input.
 */
export type LeafDecoder = (raw: string) => unknown;

const INT32 = /^[+-]?\d{1,10}$/;
const INT64 = /^[+-]?\d{1,20}$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * The decoder for a field settable from text: scalars, enums (by name or number), Timestamp
 * (RFC 3339), Duration (`1.5s`), FieldMask (comma list, camel or snake paths) and the wrapper types,
 * singular or repeated. Undefined for other messages and maps.
 */
export function leafDecoderFor(field: DescField): LeafDecoder | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return scalarDecoder(field.scalar);
    case "enum":
      return enumDecoder(field.enum);
    case "message":
      return messageDecoder(field.message);
    case "list":
      if (field.listKind === "scalar") return scalarDecoder(field.scalar);
      if (field.listKind === "enum") return enumDecoder(field.enum);
      return messageDecoder(field.message);
    case "map":
      return undefined;
  }
}

function scalarDecoder(type: ScalarType): LeafDecoder {
  switch (type) {
    case ScalarType.STRING:
      return (raw) => raw;
    case ScalarType.BOOL:
      return decodeBool;
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return (raw) => decodeInt32(raw, -0x80000000, 0x7fffffff);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return (raw) => decodeInt32(raw, 0, 0xffffffff);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return (raw) => decodeInt64(raw, -(2n ** 63n), 2n ** 63n - 1n);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return (raw) => decodeInt64(raw, 0n, 2n ** 64n - 1n);
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return decodeFloat;
    case ScalarType.BYTES:
      return decodeBytes;
  }
}

function decodeBool(raw: string): boolean {
  switch (raw.toLowerCase()) {
    case "true":
    case "1":
      return true;
    case "false":
    case "0":
      return false;
  }
  throw new FieldValueError(`"${raw}" is not a boolean (true or false)`);
}

function decodeInt32(raw: string, min: number, max: number): number {
  const n = INT32.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n)) throw new FieldValueError(`"${raw}" is not an integer`);
  if (n < min || n > max) throw new FieldValueError(`${raw} is out of range [${min}, ${max}]`);
  return n;
}

function decodeInt64(raw: string, min: bigint, max: bigint): bigint {
  if (!INT64.test(raw)) throw new FieldValueError(`"${raw}" is not an integer`);
  const n = BigInt(raw);
  if (n < min || n > max) throw new FieldValueError(`${raw} is out of range [${min}, ${max}]`);
  return n;
}

function decodeFloat(raw: string): number {
  if (raw === "NaN") return Number.NaN;
  if (raw === "Infinity") return Number.POSITIVE_INFINITY;
  if (raw === "-Infinity") return Number.NEGATIVE_INFINITY;
  const n = raw.trim() === "" ? Number.NaN : Number(raw);
  if (!Number.isFinite(n)) throw new FieldValueError(`"${raw}" is not a number`);
  return n;
}

function decodeBytes(raw: string): Uint8Array {
  if (!BASE64.test(raw)) throw new FieldValueError("is not base64");
  return base64Decode(raw);
}

function enumDecoder(desc: DescEnum): LeafDecoder {
  const byName = new Map(desc.values.map((v) => [v.name, v.number]));
  const numbers = new Set(desc.values.map((v) => v.number));
  return (raw) => {
    const named = byName.get(raw);
    if (named !== undefined) return named;
    if (INT32.test(raw) && numbers.has(Number(raw))) return Number(raw);
    throw new FieldValueError(`"${raw}" is not a value of ${desc.typeName}`);
  };
}

function messageDecoder(desc: DescMessage): LeafDecoder | undefined {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
      return (raw) => {
        try {
          return reflect(desc, fromJson(desc, raw));
        } catch (err) {
          throw new FieldValueError(jsonErrorDescription(err));
        }
      };
    case "google.protobuf.FieldMask":
      return decodeFieldMask;
  }
  if (isWrapperDesc(desc)) {
    const valueField = desc.fields[0]!;
    const inner = leafDecoderFor(valueField)!;
    return (raw) => {
      const message = create(desc);
      const r = reflect(desc, message);
      r.set(valueField, inner(raw));
      return r;
    };
  }
  return undefined;
}

/** Comma list of paths in lowerCamelCase or snake_case; stored as snake_case proto paths. */
function decodeFieldMask(raw: string): ReflectMessage {
  const paths = raw
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map(toSnake);
  return reflect(FieldMaskSchema, create(FieldMaskSchema, { paths }));
}

/** Strips protobuf-es's `cannot decode … from JSON: ` prefix from a decode error. */
export function jsonErrorDescription(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^cannot decode .*? from JSON: /, "");
}
