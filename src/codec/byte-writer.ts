import { protoInt64 } from "@bufbuild/protobuf";

const TWO_POW_32 = 2 ** 32;

/**
 * A growable output buffer with the protobuf wire primitives the compiled binary encoder needs.
 * Length-delimited values are written in place: one byte is reserved for the length, and the body
 * is moved up in the rare case its length needs more (`beginDelimited` / `endDelimited`).
 */
export class ByteWriter {
  private buf: Buffer;
  private view: DataView;
  pos = 0;

  constructor(initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  /** Bytes allocated for output. */
  get capacity(): number {
    return this.buf.length;
  }

  /** Starts again from an empty output (after `headroom` unwritten bytes), keeping the allocated buffer. */
  reset(headroom = 0): void {
    this.pos = 0;
    this.ensure(headroom);
    this.pos = headroom;
  }

  /** A copy of everything written (from Node's buffer pool when small). */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.length);
  }

  /** An unsigned varint of an integer in 0 … 2^53 − 1 (tags, lengths, uint32, small int64). */
  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    let v = value;
    while (v >= TWO_POW_32) {
      buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    while (v > 0x7f) {
      buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[this.pos++] = v;
  }

  /** int32 and enum values: negative numbers are sign-extended to ten bytes. */
  int32(value: number): void {
    if (value >= 0) this.varint(value);
    else this.varint64(value | 0, -1);
  }

  sint32(value: number): void {
    this.varint(((value << 1) ^ (value >> 31)) >>> 0);
  }

  /** int64 and uint64 (bigint, or a decimal string for `jstype = JS_STRING` fields). */
  int64(value: bigint | string | number, unsigned: boolean): void {
    if (typeof value === "bigint") {
      // One conversion instead of two bigint comparisons (timestamps: two per list item). A value
      // beyond 2^53 - 1 converts to at least 2^53, so the check below is exact.
      const n = Number(value);
      if (n >= 0 && n <= Number.MAX_SAFE_INTEGER) {
        this.varint(n);
        return;
      }
    }
    const { lo, hi } = unsigned ? protoInt64.uEnc(value) : protoInt64.enc(value);
    this.varint64(lo, hi);
  }

  sint64(value: bigint | string | number): void {
    const { lo, hi } = protoInt64.enc(value);
    const sign = hi >> 31;
    this.varint64((lo << 1) ^ sign, ((hi << 1) | (lo >>> 31)) ^ sign);
  }

  /** A varint from the two's-complement halves of a 64-bit integer. */
  private varint64(lo: number, hi: number): void {
    this.ensure(10);
    const buf = this.buf;
    let low = lo >>> 0;
    let high = hi >>> 0;
    while (high !== 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low;
  }

  bool(value: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = value ? 1 : 0;
  }

  fixed32(value: number, signed: boolean): void {
    this.ensure(4);
    if (signed) this.view.setInt32(this.pos, value, true);
    else this.view.setUint32(this.pos, value, true);
    this.pos += 4;
  }

  fixed64(value: bigint | string | number, signed: boolean): void {
    const { lo, hi } = signed ? protoInt64.enc(value) : protoInt64.uEnc(value);
    this.ensure(8);
    this.view.setInt32(this.pos, lo, true);
    this.view.setInt32(this.pos + 4, hi, true);
    this.pos += 8;
  }

  float(value: number): void {
    this.ensure(4);
    this.view.setFloat32(this.pos, value, true);
    this.pos += 4;
  }

  double(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  /** A length-delimited UTF-8 string (lone surrogates become U+FFFD, as with TextEncoder). */
  string(value: string): void {
    const length = value.length;
    // ASCII up to 127 characters (uids, names, descriptions) is copied here: a byte per unit and a
    // one-byte length, without the native call of `Buffer.write` (most of the cost of a short
    // string). The first other unit hands the string to the UTF-8 path below.
    if (length < 0x80) {
      this.ensure(1 + length);
      const buf = this.buf;
      const start = this.pos + 1;
      let i = 0;
      for (; i < length; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === length) {
        buf[this.pos] = length;
        this.pos = start + length;
        return;
      }
    }
    // At most three bytes per UTF-16 unit: a short string's length surely fits one byte.
    if (length <= 42) {
      this.ensure(1 + length * 3);
      const n = this.buf.write(value, this.pos + 1, "utf8");
      this.buf[this.pos] = n;
      this.pos += 1 + n;
      return;
    }
    const n = Buffer.byteLength(value, "utf8");
    this.varint(n);
    this.ensure(n);
    this.pos += this.buf.write(value, this.pos, "utf8");
  }

  /** Length-delimited bytes. */
  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.raw(value);
  }

  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** Reserves the length of a length-delimited value; returns where it starts (for `endDelimited`). */
  beginDelimited(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the length of the value begun at `start`, moving its body up when the length needs more than one byte. */
  endDelimited(start: number): void {
    const length = this.pos - start - 1;
    if (length < 0x80) {
      this.buf[start] = length;
      return;
    }
    let extra = 0;
    for (let v = length >>> 14; ; v >>>= 7) {
      extra++;
      if (v === 0) break;
    }
    const end = this.pos;
    this.ensure(extra);
    this.buf.copyWithin(start + 1 + extra, start + 1, end);
    this.pos = start;
    this.varint(length);
    this.pos = end + extra;
  }
}
