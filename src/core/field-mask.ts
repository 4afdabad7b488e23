import { invalidArgument } from "./errors.js";

/** How one resource's fields behave under an Update RPC. */
export interface MaskSpec {
  /** Every top-level field of the resource (proto names); any other path is INVALID_ARGUMENT. */
  known: readonly string[];
  /** Fields an update may change; known fields not listed here are output-only and ignored. */
  updatable: readonly string[];
}

/**
 * Resolves the top-level fields an update changes, as proto (snake_case) names.
 *
 * - `paths` given (from `update_mask`): `*` means every updatable field (full replacement); each
 *   path may be snake_case or lowerCamelCase and may name a sub-field (`claim_match.issuer`), which
 *   selects its top-level field. A path outside `known` → INVALID_ARGUMENT on `update_mask`.
 *   Output-only fields are ignored.
 * - `paths` empty: the fields `populated` reports (non-default values) — over REST the transcoder
 *   has already turned the body's keys into a mask, so this is the gRPC/Connect case (AIP-134).
 */
export function resolveUpdateMask(
  spec: MaskSpec,
  paths: readonly string[],
  populated: () => string[],
): string[] {
  const selected = paths.length === 0 ? populated() : paths;
  const out = new Set<string>();
  for (const raw of selected) {
    const path = raw.trim();
    if (path === "*") {
      for (const f of spec.updatable) out.add(f);
      continue;
    }
    const top = toSnake(path.split(".")[0] ?? "");
    if (!spec.known.includes(top)) {
      throw invalidArgument("update_mask", `unknown field path "${path}"`);
    }
    if (spec.updatable.includes(top)) out.add(top);
  }
  return [...out];
}

/** lowerCamelCase → snake_case (`createTime` → `create_time`); snake_case passes through. */
export function toSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
