/**
 * A small deterministic random generator (mulberry32) for tests that must replay the same
 * "random" choices and bytes from a seed.
 */
export interface SeededRandom {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  /** `length` pseudo-random bytes. */
  bytes(length: number): Buffer;
}

/** A generator whose whole sequence is fixed by `seed` (any 32-bit integer). */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const word = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return {
    next: () => word() / 2 ** 32,
    int: (min, max) => min + Math.floor((word() / 2 ** 32) * (max - min + 1)),
    bytes(length) {
      const out = Buffer.allocUnsafe(length);
      let i = 0;
      for (; i + 4 <= length; i += 4) out.writeUInt32LE(word(), i);
      for (; i < length; i++) out[i] = word() & 0xff;
      return out;
    },
  };
}
