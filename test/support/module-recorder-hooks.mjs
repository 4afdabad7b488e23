// The module hooks of module-recorder.mjs (they run on Node's hooks thread).
import { appendFileSync } from "node:fs";

let file;

/** Receives the file to append to from `register`. */
export function initialize(data) {
  file = data.file;
}

/** Resolves as usual, then records the resolved URL. */
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(file, `${resolved.url}\n`);
  return resolved;
}
