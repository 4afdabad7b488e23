// Timing helpers of `npm run bench:scale`: run an operation after a warm-up, report p50 and p99.

/** Percentiles of one operation's samples, in ms. */
export interface Figure {
  samples: number;
  p50: number;
  p99: number;
}

/** The `q` quantile (0..1) of sorted `values` (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Runs `op` `warmup` times untimed, then `samples` times one after another (each after `before`); p50/p99 of those. */
export async function measure(
  op: (i: number) => Promise<unknown>,
  samples: number,
  warmup = Math.max(1, Math.floor(samples / 10)),
  /** Untimed work before each sample (a write between reads). */
  before?: (i: number) => Promise<unknown>,
): Promise<Figure> {
  for (let i = 0; i < warmup; i++) await op(i);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    await before?.(i);
    const t0 = performance.now();
    await op(i);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { samples, p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** A deterministic pseudo-random index generator (mulberry32), so runs pick the same rows. */
export function randomIndexes(seed: number): (below: number) => number {
  let a = seed >>> 0;
  return (below) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

/** `ms` as text with 2 significant decimals. */
export const ms = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(2));
