/** The first `max` items of an async iterable (e.g. the SDK's `listAll`), as an array. */
export async function collect<T>(items: AsyncIterable<T>, max = 1000): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    out.push(item);
    if (out.length >= max) break;
  }
  return out;
}
