import { failedPrecondition } from "../../core/errors.js";
import { selfAndAncestors } from "../../core/uidp.js";
import type { Store } from "../../storage/store.js";
import { ImmutableTagError } from "../content-errors.js";
import { firstMatching, immutableRuleFor } from "./immutable-rule-for.js";

/**
 * Referrer fallback tags: the OCI referrers tag schema (`sha256-<hex>`, an index moved each time a
 * referrer is added) and cosign's tag layout (`sha256-<hex>.sig`, `.att`, `.sbom`). Referrers can
 * always be added to an immutable image, so these tags always move, whatever the rules say.
 */
const REFERRER_TAG = /^sha256-[0-9a-f]{64}(?:\.[a-z]+)?$/;

/** True for a tag name that is a referrer fallback tag (never protected by a rule). */
export function isReferrerTag(tagName: string): boolean {
  return REFERRER_TAG.test(tagName);
}

/** The rule protecting tag `tagName` of `repoUid` (read in `tx`), referrer fallback tags excepted. */
async function protectingRule(
  tx: Pick<Store, "immutabilityRules">,
  repoUid: string,
  tagName: string,
): Promise<{ uid: string } | undefined> {
  return isReferrerTag(tagName) ? undefined : immutableRuleFor(tx, repoUid, tagName);
}

/**
 * API writes (CreateTag moving a tag, DeleteTag, RestoreTag): throws FAILED_PRECONDITION
 * `TAG_IMMUTABLE`, naming the rule, when a rule protects the tag. Call it in the transaction that
 * moves or deletes the tag (for a move, from `TagStore.put`'s `beforeMove`, with the row locked).
 */
export async function refuseImmutableTag(
  tx: Pick<Store, "immutabilityRules">,
  tag: { uid: string; repoUid: string; name: string },
): Promise<void> {
  const rule = await protectingRule(tx, tag.repoUid, tag.name);
  if (rule !== undefined) {
    throw failedPrecondition("TAG_IMMUTABLE", `tag ${tag.name} is immutable (rule ${rule.uid})`, tag.uid);
  }
}

/**
 * Registry writes (manifest PUT moving a tag, tag or manifest DELETE): throws ImmutableTagError
 * (OCI 403 DENIED "tag v1.2 of acme/app is immutable (rule <uid>)") when a rule protects the tag.
 * Same transaction rule as refuseImmutableTag.
 */
export async function denyImmutableRegistryTag(
  tx: Pick<Store, "immutabilityRules">,
  tag: { repoUid: string; name: string },
  repoName: string,
): Promise<void> {
  const rule = await protectingRule(tx, tag.repoUid, tag.name);
  if (rule !== undefined) throw new ImmutableTagError(tag.name, repoName, rule.uid);
}

/** Tag names read per round when a whole repo is checked. */
const NAMES_PAGE = 1000;

/**
 * DeleteRepo: throws FAILED_PRECONDITION `TAG_IMMUTABLE` naming the first protected tag and its
 * rule when the repo holds a tag a rule protects (deleting the repo would delete it). The rules are
 * read once; the tag names page by page. Call it in the transaction that deletes the repo.
 */
export async function refuseRepoWithImmutableTags(
  tx: Pick<Store, "immutabilityRules" | "tags">,
  repoUid: string,
): Promise<void> {
  const rules = await tx.immutabilityRules.ofParents(selfAndAncestors(repoUid));
  if (rules.length === 0) return;
  let after: string | undefined;
  for (;;) {
    const names = await tx.tags.names(repoUid, {
      ...(after === undefined ? {} : { after }),
      limit: NAMES_PAGE,
    });
    for (const name of names) {
      const rule = isReferrerTag(name) ? undefined : firstMatching(rules, name);
      if (rule !== undefined) {
        throw failedPrecondition(
          "TAG_IMMUTABLE",
          `the repo holds tag ${name}, which is immutable (rule ${rule.uid}); delete or narrow the rule first`,
          repoUid,
        );
      }
    }
    if (names.length < NAMES_PAGE) return;
    after = names[names.length - 1];
  }
}
