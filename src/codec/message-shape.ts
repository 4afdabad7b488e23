import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { isScalarZeroValue } from "@bufbuild/protobuf/reflect";

// What the compiled encoders (json-encoder.ts, binary-encoder.ts) share: which messages they
// handle themselves, field order, and protobuf-es's rules for "is this field set".

/** FeatureSet.FieldPresence values, as protobuf-es reports them on `DescField.presence`. */
const IMPLICIT = 2;
const LEGACY_REQUIRED = 3;

/** A message object read by field local names (what protobuf-es messages are). */
export type MessageObject = Record<string, unknown>;

/** `google.protobuf.Timestamp`, the one well-known type the compiled encoders write themselves. */
export const TIMESTAMP = "google.protobuf.Timestamp";

/**
 * True when every field of `desc` is one the compiled encoders write exactly like protobuf-es.
 * Left to protobuf-es: proto2 required fields, group (delimited) encoding, maps other than
 * string keys to scalar/enum values, and message fields of well-known types other than Timestamp
 * (wrappers and Struct have their own in-memory shapes; most others their own JSON).
 */
export function isCompilable(desc: DescMessage): boolean {
  return desc.fields.every((f) => {
    if (f.presence === LEGACY_REQUIRED) return false;
    switch (f.fieldKind) {
      case "scalar":
      case "enum":
        return true;
      case "message":
        return !f.delimitedEncoding && isCompilableMessageType(f.message);
      case "list":
        return f.listKind !== "message" || (!f.delimitedEncoding && isCompilableMessageType(f.message));
      case "map":
        return f.mapKey === ScalarType.STRING && f.mapKind !== "message";
    }
    return false;
  });
}

function isCompilableMessageType(desc: DescMessage): boolean {
  return desc.typeName === TIMESTAMP || !desc.typeName.startsWith("google.protobuf.");
}

/** The fields of `desc` in field-number order (the order protobuf-es writes them in). */
export function sortedFields(desc: DescMessage): DescField[] {
  return [...desc.fields].sort((a, b) => a.number - b.number);
}

/**
 * Reads one field the way protobuf-es decides presence: the value when set, else undefined.
 * Oneof members are set when selected; explicit-presence fields when an own property holds a
 * value; implicit-presence scalars and enums when not zero; lists and maps when not empty.
 */
export function fieldReader(field: DescField): (message: MessageObject) => unknown {
  const name = field.localName;
  if (field.oneof) {
    const group = field.oneof.localName;
    return (m) => {
      const selected = m[group] as { case: string | undefined; value?: unknown };
      return selected.case === name ? selected.value : undefined;
    };
  }
  if (field.presence !== IMPLICIT) {
    return (m) => (m[name] !== undefined && Object.hasOwn(m, name) ? m[name] : undefined);
  }
  switch (field.fieldKind) {
    case "list":
      return (m) => ((m[name] as unknown[]).length > 0 ? m[name] : undefined);
    case "map":
      return (m) => (Object.keys(m[name] as object).length > 0 ? m[name] : undefined);
    case "enum": {
      const zero = field.enum.values[0]?.number;
      return (m) => (m[name] !== zero ? m[name] : undefined);
    }
    case "scalar": {
      const type = field.scalar;
      if (type === ScalarType.STRING) return (m) => (m[name] !== "" ? m[name] : undefined);
      if (type === ScalarType.BOOL) return (m) => (m[name] === true ? true : undefined);
      if (type === ScalarType.DOUBLE || type === ScalarType.FLOAT || type === ScalarType.BYTES) {
        return (m) => (isScalarZeroValue(type, m[name]) ? undefined : m[name]);
      }
      // Integers: numbers and bigints directly; a decimal string (jstype = JS_STRING) as protobuf-es.
      return (m) => {
        const v = m[name];
        if (typeof v === "bigint") return v === 0n ? undefined : v;
        if (typeof v === "number") return v === 0 ? undefined : v;
        return isScalarZeroValue(type, v) ? undefined : v;
      };
    }
    case "message":
      throw new Error(`${field}: a message field with implicit presence`);
  }
}

/** Unknown fields kept on a message (decoded but not in its schema), if any. */
export function unknownFieldsOf(
  message: MessageObject,
): readonly { no: number; wireType: number; data: Uint8Array }[] | undefined {
  const unknown = message.$unknown as { no: number; wireType: number; data: Uint8Array }[] | undefined;
  return unknown !== undefined && unknown.length > 0 ? unknown : undefined;
}
