/**
 * Forwards pokes at most once per `intervalMs`: the first at once, and of those that come within
 * the interval after it, one when the interval ends (so every poke is followed by a forwarded one
 * within `intervalMs`). `cancel` drops a held poke. `now` (ms; default `performance.now`) is the
 * clock the interval is measured on (tests move it along with mocked timers).
 */
export function throttlePokes(
  forward: () => void,
  intervalMs: number,
  now: () => number = () => performance.now(),
): { poke(): void; cancel(): void } {
  let last = Number.NEGATIVE_INFINITY;
  let held: NodeJS.Timeout | undefined;
  const send = () => {
    held = undefined;
    last = now();
    forward();
  };
  return {
    poke() {
      if (held) return;
      const wait = last + intervalMs - now();
      if (wait <= 0) send();
      else held = setTimeout(send, wait);
    },
    cancel() {
      clearTimeout(held);
      held = undefined;
    },
  };
}
