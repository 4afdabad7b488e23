import type { TagRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import { eolStateAt } from "./eol-status.js";
import { resolveTagEol } from "./tag-eol-resolver.js";

/**
 * `tags` with `deprecated` as the v2 API shows it (ADR 0031): the stored flag (set through CreateTag)
 * OR the tag's release cycle has reached end-of-life at `now`. Computed at read, so a cycle's EOL
 * date passing needs no write. The grace period does not matter here: past EOL is deprecated.
 */
export async function withEolDeprecation(
  store: Pick<Store, "eol">,
  tags: readonly TagRow[],
  now: number,
): Promise<TagRow[]> {
  const eol = await resolveTagEol(store, tags);
  if (eol.size === 0) return [...tags];
  return tags.map((tag) => {
    const found = eol.get(tag.uid);
    if (tag.deprecated || found === undefined) return tag;
    return eolStateAt(found.cycle, now, 0).pastEol ? { ...tag, deprecated: true } : tag;
  });
}
