/**
 * Sets `key` to `value` in `map` as its newest entry (a key already there moves to the end), after
 * evicting the oldest entries in insertion order so that the map holds at most `max` entries
 * (`max` ≥ 1). `onEvict` is called with each evicted entry, after it left the map. The bounded
 * caches of the server use this: lookups are plain `Map.get`, and a full cache forgets what it
 * stored first.
 */
export function setBounded<K, V>(
  map: Map<K, V>,
  key: K,
  value: V,
  max: number,
  onEvict?: (key: K, value: V) => void,
): void {
  map.delete(key);
  while (map.size >= max) {
    const oldest = map.entries().next();
    if (oldest.done) break;
    const [evictedKey, evictedValue] = oldest.value;
    map.delete(evictedKey);
    onEvict?.(evictedKey, evictedValue);
  }
  map.set(key, value);
}
