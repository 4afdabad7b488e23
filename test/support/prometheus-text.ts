/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses Prometheus text exposition format (0.0.4) into samples, skipping comments. Label values
 * are unescaped (`\\`, `\"`, `\n`). Throws on a line that is not a sample, so a malformed exposition
 * fails the test that reads it.
 */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = (raw as string).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * The value of the one sample named `name` whose labels include `labels`; undefined when none
 * matches. Throws when several match (the test named the series too loosely).
 */
export function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
