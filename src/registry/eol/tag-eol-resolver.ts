import type { EolCycleRow, EolRepoRule } from "../../storage/eol-store.js";
import type { TagRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import { cycleOfTag } from "./cycle-match.js";
import { globSpecificity, tagGlobMatches } from "./tag-glob.js";

/** What the EOL data says about one tag an EOL rule matches. */
export interface TagEol {
  /** The rule the tag follows (the most specific glob when several match). */
  rule: EolRepoRule;
  /** The tag's cycle; undefined when the product has no cycle fitting the tag's name. */
  cycle?: EolCycleRow;
  /** Every cycle of the rule's product (for facts relative to the others, such as legacy LTS). */
  productCycles: readonly EolCycleRow[];
}

/**
 * The EOL data of each of `tags` that some rule matches, by tag uid (tags no rule matches are
 * absent). Of several matching rules the most specific glob wins (`globSpecificity`), then the
 * product name in byte order. Two store reads for the whole batch (rules, then cycles).
 */
export async function resolveTagEol(
  store: Pick<Store, "eol">,
  tags: readonly TagRow[],
): Promise<Map<string, TagEol>> {
  const resolved = new Map<string, TagEol>();
  if (tags.length === 0) return resolved;
  const rules = await store.eol.rulesForRepos([...new Set(tags.map((t) => t.repoUid))]);
  if (rules.length === 0) return resolved;

  const chosen = new Map<string, EolRepoRule>();
  for (const tag of tags) {
    const rule = mostSpecific(
      rules.filter((r) => r.repoUid === tag.repoUid && tagGlobMatches(r.tagGlob, tag.name)),
    );
    if (rule) chosen.set(tag.uid, rule);
  }
  const products = [...new Set([...chosen.values()].map((r) => r.product))];
  const cyclesByProduct = new Map<string, EolCycleRow[]>(products.map((p) => [p, []]));
  for (const cycle of await store.eol.cycles(products)) cyclesByProduct.get(cycle.product)?.push(cycle);

  for (const tag of tags) {
    const rule = chosen.get(tag.uid);
    if (!rule) continue;
    const productCycles = cyclesByProduct.get(rule.product) ?? [];
    const cycle = cycleOfTag(tag.name, productCycles);
    resolved.set(tag.uid, { rule, productCycles, ...(cycle ? { cycle } : {}) });
  }
  return resolved;
}

function mostSpecific(rules: readonly EolRepoRule[]): EolRepoRule | undefined {
  let best: EolRepoRule | undefined;
  for (const rule of rules) {
    if (best === undefined || compareRules(rule, best) < 0) best = rule;
  }
  return best;
}

/** Negative when `a` should win over `b`. */
function compareRules(a: EolRepoRule, b: EolRepoRule): number {
  const [aLiteral, aWild] = globSpecificity(a.tagGlob);
  const [bLiteral, bWild] = globSpecificity(b.tagGlob);
  if (aLiteral !== bLiteral) return bLiteral - aLiteral;
  if (aWild !== bWild) return bWild - aWild;
  return a.product < b.product ? -1 : a.product > b.product ? 1 : 0;
}
