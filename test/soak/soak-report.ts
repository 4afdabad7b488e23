import type { KillRecord } from "./replica-set.js";
import type { CheckResult } from "./soak-checks.js";
import type { OpRecord } from "./soak-load.js";

/** Everything the report shows. */
export interface SoakFigures {
  minutes: number;
  replicas: number;
  clients: number;
  /** How long the load ran. */
  seconds: number;
  records: OpRecord[];
  kills: KillRecord[];
  byCause: Map<string, number>;
  checks: CheckResult[];
}

/** The `q` quantile (0–1) of `values` (nearest rank), or NaN for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/** The report as Markdown: operations by kind, errors by cause, kills and recovery, checks. */
export function renderReport(f: SoakFigures): string {
  const kinds = [...new Set(f.records.map((r) => r.kind))].sort();
  const lines = [
    `# Soak: ${f.replicas} replicas behind HAProxy, ${f.clients} clients, ${f.seconds.toFixed(0)} s of load`,
    "",
    "| operation | ok | failed | ok/s | p50 ms | p99 ms |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const kind of kinds) {
    const of = f.records.filter((r) => r.kind === kind);
    const ok = of.filter((r) => r.ok);
    const durations = ok.map((r) => r.end - r.start);
    lines.push(
      `| ${kind} | ${ok.length} | ${of.length - ok.length} | ${(ok.length / f.seconds).toFixed(1)} | ${quantile(durations, 0.5).toFixed(0)} | ${quantile(durations, 0.99).toFixed(0)} |`,
    );
  }
  const allOk = f.records.filter((r) => r.ok);
  lines.push(
    `| **all** | ${allOk.length} | ${f.records.length - allOk.length} | ${(allOk.length / f.seconds).toFixed(1)} | | |`,
    "",
    "Errors by cause:",
    "",
  );
  if (f.byCause.size === 0) lines.push("- none");
  for (const [cause, count] of [...f.byCause].sort()) lines.push(`- ${cause}: ${count}`);
  const start = Math.min(...f.records.map((r) => r.start));
  const recoveries = f.kills.map((k) => (k.readyAt ?? Number.NaN) - k.killedAt);
  lines.push(
    "",
    `Kills: ${f.kills.length}; recovery (kill -9 to the restarted replica answering /readyz 200 on both ports): p50 ${quantile(recoveries, 0.5).toFixed(0)} ms, max ${Math.max(...recoveries, 0).toFixed(0)} ms`,
    "",
  );
  for (const k of f.kills) {
    lines.push(
      `- ${((k.killedAt - start) / 1000).toFixed(1)} s: ${k.replica} killed, ready after ${((k.readyAt ?? Number.NaN) - k.killedAt).toFixed(0)} ms`,
    );
  }
  lines.push("", "Checks:", "");
  for (const check of f.checks) {
    const verdict = check.violations.length === 0 ? "PASS" : "FAIL";
    lines.push(`- ${verdict} ${check.name}: ${check.summary}`);
    for (const v of check.violations.slice(0, 20)) lines.push(`  - ${v}`);
    if (check.violations.length > 20) lines.push(`  - … ${check.violations.length - 20} more`);
  }
  return `${lines.join("\n")}\n`;
}
