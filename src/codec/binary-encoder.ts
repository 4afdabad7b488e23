import { type DescField, type DescMessage, type Message, ScalarType, toBinary } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { ByteWriter } from "./byte-writer.js";
import {
  fieldReader,
  isCompilable,
  type MessageObject,
  sortedFields,
  unknownFieldsOf,
} from "./message-shape.js";

/**
 * Writes one message as protobuf binary, after `headroom` bytes (default 0) left for the caller
 * to fill, such as the 5-byte gRPC message prefix.
 */
export type BinaryEncoder = (message: Message, headroom?: number) => Buffer;

/** Writes a message's fields (not its tag or length) to the writer. */
type WriteBody = (w: ByteWriter, message: MessageObject) => void;
/** Writes one value of a field (without its tag). */
type WriteValue = (w: ByteWriter, value: unknown) => void;

const compiled = new Map<DescMessage, WriteBody>();
// Encoding is synchronous and the process single-threaded: one scratch buffer serves every call.
// One grown by an unusually large message is dropped rather than kept for the process's lifetime.
const SCRATCH_SIZE = 16 * 1024;
const MAX_KEPT_SCRATCH = 1024 * 1024;
let scratch = new ByteWriter(SCRATCH_SIZE);

/**
 * The binary encoder of `desc`, byte for byte what protobuf-es `toBinary` writes (fields in number
 * order, packed scalars where the field is packed, unknown fields last), compiled once per message
 * type. protobuf-es writes through its reflection API into per-value chunks that are joined at the
 * end (about 8 µs per list item here). Message types it does not handle itself (see
 * `isCompilable`) are written by protobuf-es and embedded.
 */
export function binaryEncoderFor(desc: DescMessage): BinaryEncoder {
  const body = bodyWriterOf(desc);
  return (message, headroom = 0) => {
    scratch.reset(headroom);
    body(scratch, message as unknown as MessageObject);
    const out = scratch.finish();
    if (scratch.capacity > MAX_KEPT_SCRATCH) scratch = new ByteWriter(SCRATCH_SIZE);
    return out;
  };
}

function bodyWriterOf(desc: DescMessage): WriteBody {
  let writer = compiled.get(desc);
  if (writer === undefined) {
    // Registered before compiling, so recursive message types find it.
    let body: WriteBody | undefined;
    writer = (w, m) => body!(w, m);
    compiled.set(desc, writer);
    body = compile(desc);
  }
  return writer;
}

function compile(desc: DescMessage): WriteBody {
  if (!isCompilable(desc)) return (w, m) => w.raw(toBinary(desc, m as unknown as Message));
  const fields = sortedFields(desc).map((field) => ({ read: fieldReader(field), write: fieldWriter(field) }));
  return (w, message) => {
    for (const field of fields) {
      const value = field.read(message);
      if (value !== undefined) field.write(w, value);
    }
    const unknown = unknownFieldsOf(message);
    if (unknown) {
      for (const { no, wireType, data } of unknown) {
        w.varint(((no << 3) | wireType) >>> 0);
        w.raw(data);
      }
    }
  };
}

/** Writes a set field: tag and value, or for lists and maps, every element. */
function fieldWriter(field: DescField): WriteValue {
  switch (field.fieldKind) {
    case "scalar":
    case "enum": {
      const type = field.scalar ?? ScalarType.INT32;
      return tagged(field.number, wireTypeOf(type), scalarWriter(type));
    }
    case "message":
      return tagged(field.number, WireType.LengthDelimited, messageWriter(field.message));
    case "list": {
      if (field.listKind === "message") {
        const item = tagged(field.number, WireType.LengthDelimited, messageWriter(field.message));
        return (w, list) => {
          for (const v of list as unknown[]) item(w, v);
        };
      }
      const type = field.scalar ?? ScalarType.INT32;
      const value = scalarWriter(type);
      if (field.packed) {
        const tag = tagOf(field.number, WireType.LengthDelimited);
        return (w, list) => {
          w.varint(tag);
          const start = w.beginDelimited();
          for (const v of list as unknown[]) value(w, v);
          w.endDelimited(start);
        };
      }
      const item = tagged(field.number, wireTypeOf(type), value);
      return (w, list) => {
        for (const v of list as unknown[]) item(w, v);
      };
    }
    case "map": {
      // String keys only (see isCompilable): an entry is {1: key, 2: value}, both always written.
      const valueType = field.scalar ?? ScalarType.INT32;
      const key = tagged(1, WireType.LengthDelimited, scalarWriter(ScalarType.STRING));
      const value = tagged(2, wireTypeOf(valueType), scalarWriter(valueType));
      const tag = tagOf(field.number, WireType.LengthDelimited);
      return (w, map) => {
        for (const [k, v] of Object.entries(map as object)) {
          w.varint(tag);
          const start = w.beginDelimited();
          key(w, k);
          value(w, v);
          w.endDelimited(start);
        }
      };
    }
  }
}

function tagOf(fieldNo: number, wireType: WireType): number {
  return ((fieldNo << 3) | wireType) >>> 0;
}

function tagged(fieldNo: number, wireType: WireType, write: WriteValue): WriteValue {
  const tag = tagOf(fieldNo, wireType);
  return (w, value) => {
    w.varint(tag);
    write(w, value);
  };
}

function messageWriter(desc: DescMessage): WriteValue {
  const body = bodyWriterOf(desc);
  return (w, value) => {
    const start = w.beginDelimited();
    body(w, value as MessageObject);
    w.endDelimited(start);
  };
}

function wireTypeOf(type: ScalarType): WireType {
  switch (type) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return WireType.LengthDelimited;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WireType.Bit64;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return WireType.Bit32;
    default:
      return WireType.Varint;
  }
}

function scalarWriter(type: ScalarType): WriteValue {
  type Int64 = bigint | string | number;
  switch (type) {
    case ScalarType.STRING:
      return (w, v) => w.string(v as string);
    case ScalarType.BOOL:
      return (w, v) => w.bool(v as boolean);
    case ScalarType.INT32:
      return (w, v) => w.int32(v as number);
    case ScalarType.UINT32:
      return (w, v) => w.varint(v as number);
    case ScalarType.SINT32:
      return (w, v) => w.sint32(v as number);
    case ScalarType.FIXED32:
      return (w, v) => w.fixed32(v as number, false);
    case ScalarType.SFIXED32:
      return (w, v) => w.fixed32(v as number, true);
    case ScalarType.INT64:
      return (w, v) => w.int64(v as Int64, false);
    case ScalarType.UINT64:
      return (w, v) => w.int64(v as Int64, true);
    case ScalarType.SINT64:
      return (w, v) => w.sint64(v as Int64);
    case ScalarType.FIXED64:
      return (w, v) => w.fixed64(v as Int64, false);
    case ScalarType.SFIXED64:
      return (w, v) => w.fixed64(v as Int64, true);
    case ScalarType.FLOAT:
      return (w, v) => w.float(v as number);
    case ScalarType.DOUBLE:
      return (w, v) => w.double(v as number);
    case ScalarType.BYTES:
      return (w, v) => w.bytes(v as Uint8Array);
  }
}
