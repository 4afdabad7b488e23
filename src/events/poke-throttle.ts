/**
 * Forwards pokes at most once per `intervalMs`: the first at once, and of those that come within
 * the interval after it, one when the interval ends (so every poke is followed by a forwarded one
 * within `intervalMs`). `cancel` drops a held poke.
 */
export function throttlePokes(forward: () => void, intervalMs: number): { poke(): void; cancel(): void } {
  let last = Number.NEGATIVE_INFINITY;
  let held: NodeJS.Timeout | undefined;
  const send = () => {
    held = undefined;
    last = performance.now();
    forward();
  };
  return {
    poke() {
      if (held) return;
      const wait = last + intervalMs - performance.now();
      if (wait <= 0) send();
      else held = setTimeout(send, wait);
    },
    cancel() {
      clearTimeout(held);
      held = undefined;
    },
  };
}
