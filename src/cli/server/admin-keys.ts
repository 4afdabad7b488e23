import { createSigningKeyRing, type SigningKeyStatus } from "../../auth/signing-keys.js";
import { type ConfigInput, loadConfig } from "../../config/config.js";
import { openConfiguredStore } from "../../config/open-configured-store.js";
import { formatTimestamp, systemClock } from "../../core/clock.js";
import type { CommandOutput } from "./command-output.js";

/**
 * `wharf admin keys rotate`: stores a new signing key, which every server sharing the database
 * signs with and publishes within seconds; the keys it replaces keep verifying until their retire
 * time (see SigningKeyRing). Prints the new kid on `out.stdout` and what happened on `out.stderr`.
 */
export async function runAdminKeysRotate(input: ConfigInput, out: CommandOutput): Promise<number> {
  const store = await openConfiguredStore(loadConfig(input));
  try {
    const keys = createSigningKeyRing({ signingKeys: store.signingKeys, clock: systemClock });
    const kid = await keys.rotate();
    const replaced = (await keys.describe()).filter((k) => k.state === "retiring");
    const until = Math.max(...replaced.map((k) => k.retireTime ?? 0));
    out.stdout.write(`${kid}\n`);
    out.stderr.write(
      `wharf: ${kid} signs from now on (servers switch within seconds)${
        replaced.length > 0 ? `; replaced keys verify until ${formatTimestamp(until)}` : ""
      }\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/** `wharf admin keys list`: one line per signing key on `out.stdout`, newest first (see `formatKeyTable`). */
export async function runAdminKeysList(input: ConfigInput, out: CommandOutput): Promise<number> {
  const store = await openConfiguredStore(loadConfig(input));
  try {
    const keys = createSigningKeyRing({ signingKeys: store.signingKeys, clock: systemClock });
    out.stdout.write(formatKeyTable(await keys.describe()));
    return 0;
  } finally {
    await store.close();
  }
}

/** A header and one line per key: kid, created, state, retire time ("-" when none), aligned. */
export function formatKeyTable(keys: readonly SigningKeyStatus[]): string {
  const rows = [
    ["KID", "CREATED", "STATE", "RETIRES"],
    ...keys.map((k) => [
      k.kid,
      formatTimestamp(k.createTime),
      k.state,
      k.retireTime === undefined ? "-" : formatTimestamp(k.retireTime),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  return rows
    .map(
      (r) =>
        `${r
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join("  ")
          .trimEnd()}\n`,
    )
    .join("");
}
