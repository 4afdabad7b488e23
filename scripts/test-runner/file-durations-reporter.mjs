// A node:test reporter that writes one JSON line per finished test file: `{"file", "ms", "ok"}`.
// scripts/run-tests.mjs adds it beside the spec reporter and reads the lines back for its report of
// the slowest files. On Node 20 each file runs in its own process and is reported as a test named
// by its path, at nesting 0, whose duration is the file's wall time.

/** Yields a JSON line for each test file's `test:complete` event; ignores every other event. */
export default async function* fileDurations(source) {
  for await (const event of source) {
    if (event.type !== "test:complete" || event.data.nesting !== 0) continue;
    const { name, file, details } = event.data;
    if (file === undefined || !file.startsWith(name)) continue;
    yield `${JSON.stringify({ file, ms: Math.round(details.duration_ms), ok: details.passed })}\n`;
  }
}
