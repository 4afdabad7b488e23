import {
  MAX_GROUP_NAME_LENGTH,
  MAX_REPO_NAME_LENGTH,
  pathComponentProblem,
} from "../../core/registry-name.js";
import type { EolCycleRow } from "../../storage/eol-store.js";
import type { PutOutcome } from "../../storage/library-store.js";
import type { Store } from "../../storage/store.js";
import { tagGlobProblem } from "./tag-glob.js";

/** An endoflife.date product slug: lowercase letters, digits, `.`, `_`, `-`; at most 64. */
const PRODUCT = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** One `--match GROUP/…/REPO:GLOB`: the group path by names from the organization, the repo name, the tag glob. */
export interface MatchRule {
  groupPath: string[];
  repoName: string;
  tagGlob: string;
}

/** Why `product` is not a product name, or undefined when it is one. */
export function productProblem(product: string): string | undefined {
  return PRODUCT.test(product)
    ? undefined
    : `product "${product}" must be an endoflife.date product name (lowercase letters, digits, ".", "_", "-"; at most 64)`;
}

/**
 * Parses `ORG[/FOLDER…]/REPO[:GLOB]` (GLOB defaults to `*`). Throws an Error saying what is wrong.
 * The rule covers the repos named REPO anywhere beneath the group ORG/FOLDER….
 */
export function parseMatchRule(text: string): MatchRule {
  const colon = text.indexOf(":");
  const path = colon < 0 ? text : text.slice(0, colon);
  const tagGlob = colon < 0 ? "*" : text.slice(colon + 1);
  const parts = path.split("/");
  const repoName = parts.pop() ?? "";
  if (parts.length === 0) throw new Error(`--match "${text}" must be ORG/REPO:TAGGLOB`);
  for (const name of parts) {
    const problem = pathComponentProblem(name, MAX_GROUP_NAME_LENGTH);
    if (problem) throw new Error(`--match "${text}": group name "${name}" ${problem}`);
  }
  const repoProblem = pathComponentProblem(repoName, MAX_REPO_NAME_LENGTH);
  if (repoProblem) throw new Error(`--match "${text}": repo name "${repoName}" ${repoProblem}`);
  const globProblem = tagGlobProblem(tagGlob);
  if (globProblem) throw new Error(`--match "${text}": ${globProblem}`);
  return { groupPath: parts, repoName, tagGlob };
}

/** The uid of the group at `path` (names from an organization down), or undefined when there is none. */
export async function groupUidByPath(
  store: Pick<Store, "groups">,
  path: readonly string[],
): Promise<string | undefined> {
  let uid = "";
  for (const name of path) {
    const group = await store.groups.getByName(uid, name);
    if (!group) return undefined;
    uid = group.uid;
  }
  return uid;
}

/** What counts each stored cycle and rule (the import summary). */
export interface EolImportSink {
  count(outcome: PutOutcome): void;
  advance(n?: number): void;
}

/**
 * Stores the cycles of `product` and its match rules in `tx` (call it inside the file's
 * transaction): each cycle and rule counts created, updated or unchanged, so importing the same
 * file again counts only unchanged. A rule's group that does not exist fails the whole import.
 */
export async function storeEolProduct(
  tx: Pick<Store, "groups" | "eol">,
  args: {
    product: string;
    cycles: readonly Omit<EolCycleRow, "product">[];
    rules: readonly MatchRule[];
    now: number;
  },
  sink: EolImportSink,
): Promise<void> {
  for (const rule of args.rules) {
    const orgUid = await groupUidByPath(tx, rule.groupPath);
    if (orgUid === undefined) {
      throw new Error(`--match: no organization or folder "${rule.groupPath.join("/")}"`);
    }
    sink.count(
      await tx.eol.putRule({
        orgUid,
        repoName: rule.repoName,
        tagGlob: rule.tagGlob,
        product: args.product,
        createTime: args.now,
      }),
    );
  }
  for (const cycle of args.cycles) {
    sink.count(await tx.eol.putCycle({ ...cycle, product: args.product }));
    sink.advance();
  }
}
