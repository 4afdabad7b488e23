/**
 * The first `limit` items of an async iteration (e.g. the SDK's `listAll`), and whether more were
 * left: the console's lists show a bounded number of rows instead of loading without end.
 */
export async function firstItems<T>(
  items: AsyncIterable<T>,
  limit: number,
): Promise<{ items: T[]; more: boolean }> {
  const out: T[] = [];
  for await (const item of items) {
    if (out.length === limit) return { items: out, more: true };
    out.push(item);
  }
  return { items: out, more: false };
}
