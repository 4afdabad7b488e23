// A byte count as people read it, shared by the CLI and the web console.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/** Bytes in binary units with one decimal (`1.5 MiB`); below 1 KiB the exact count (`1023 B`). */
export function formatBytes(bytes: number | bigint): string {
  let value = Number(bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}
