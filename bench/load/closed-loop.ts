/** What one load run measured. */
export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  errors: number;
  /** CPU time (user + system) this load generator spent per request while measuring, µs. */
  clientCpuUs: number;
  /** Requests including the warm-up second (for CPU per request measured over the whole run). */
  allRequests: number;
}

/**
 * Runs `one` from `concurrency` closed-loop workers: one second of warm-up, then `seconds` of
 * measurement. `one` resolves true on success, false on an error, and never rejects.
 */
export async function runClosedLoop(
  one: () => Promise<boolean>,
  concurrency: number,
  seconds: number,
): Promise<LoadResult> {
  const warmUntil = Date.now() + 1000;
  let warm = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < warmUntil) {
        await one();
        warm++;
      }
    }),
  );
  let requests = 0;
  let errors = 0;
  let running = true;
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  setTimeout(() => {
    running = false;
  }, seconds * 1000);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (running) {
        if (!(await one())) errors++;
        requests++;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  const clientCpuUs = requests > 0 ? (cpu.user + cpu.system) / requests : 0;
  return {
    requests,
    seconds: elapsed,
    rps: requests / elapsed,
    errors,
    clientCpuUs,
    allRequests: warm + requests,
  };
}
