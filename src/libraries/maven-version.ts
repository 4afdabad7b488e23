// Maven's version order (org.apache.maven.artifact.versioning.ComparableVersion, Maven 3.9), which
// no maintained npm package implements. A version is split into items: numbers, qualifiers
// (words) and sublists. `.` separates items of one list; `-`, and a switch between digits and
// letters, open a sublist. Trailing "null" items (0, "", "ga", "final", "release") are dropped.

type Item =
  | { kind: "int"; value: bigint }
  | { kind: "string"; value: string }
  | { kind: "list"; items: Item[] };

const QUALIFIERS = ["alpha", "beta", "milestone", "rc", "snapshot", "", "sp"];
const ALIASES: Record<string, string> = { ga: "", final: "", release: "", cr: "rc" };
const RELEASE_INDEX = String(QUALIFIERS.indexOf(""));

function stringItem(text: string, followedByDigit: boolean): Item {
  let value = text.toLowerCase();
  if (followedByDigit && value.length === 1) {
    // "a1" = alpha-1, "b2" = beta-2, "m3" = milestone-3.
    value = value === "a" ? "alpha" : value === "b" ? "beta" : value === "m" ? "milestone" : value;
  }
  return { kind: "string", value: ALIASES[value] ?? value };
}

function parseItem(combination: boolean, digits: boolean, text: string): Item {
  if (combination) {
    // A qualifier directly followed by digits ("rc1"): the qualifier, with the number in a sublist.
    const at = text.search(/\d/);
    const number: Item = { kind: "int", value: BigInt(text.slice(at)) };
    return { kind: "list", items: [stringItem(text.slice(0, at), true), number] };
  }
  return digits ? { kind: "int", value: BigInt(text) } : stringItem(text, false);
}

function isNull(item: Item): boolean {
  if (item.kind === "int") return item.value === 0n;
  if (item.kind === "string") return item.value === "";
  return item.items.length === 0;
}

function normalize(list: Item[]): void {
  for (let i = list.length - 1; i >= 0; i--) {
    const item = list[i] as Item;
    if (isNull(item)) list.splice(i, 1);
    else if (item.kind !== "list") break;
  }
}

/** The item list of a Maven version string (lowercased, as Maven does). */
function parse(version: string): Item[] {
  const text = version.toLowerCase();
  const root: Item[] = [];
  let list = root;
  const stack: Item[][] = [root];
  const openSublist = () => {
    const sub: Item[] = [];
    list.push({ kind: "list", items: sub });
    list = sub;
    stack.push(sub);
  };
  let start = 0;
  let digits = false;
  let combination = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "." || c === "-") {
      if (i === start) list.push({ kind: "int", value: 0n });
      else list.push(parseItem(combination, digits, text.slice(start, i)));
      combination = false;
      start = i + 1;
      if (c === "-") openSublist();
    } else if (c >= "0" && c <= "9") {
      if (!digits && i > start) {
        // Letters then digits ("rc1"): one combined item.
        combination = true;
        if (list.length > 0) openSublist();
      }
      digits = true;
    } else {
      if (digits && i > start) {
        list.push(parseItem(combination, true, text.slice(start, i)));
        start = i;
        openSublist();
        combination = false;
      }
      digits = false;
    }
  }
  if (text.length > start) {
    // "1.0.0.X1" < "1.0.0-X2": a trailing ".X" counts as "-X".
    if (!digits && list.length === 0 && list !== root) openSublist();
    list.push(parseItem(combination, digits, text.slice(start)));
  }
  for (let i = stack.length - 1; i >= 0; i--) normalize(stack[i] as Item[]);
  return root;
}

function qualifierRank(value: string): string {
  const index = QUALIFIERS.indexOf(value);
  return index >= 0 ? String(index) : `${QUALIFIERS.length}-${value}`;
}

/** Compares an item with a missing one (the shorter list's end). */
function compareWithNothing(item: Item): number {
  if (item.kind === "int") return item.value === 0n ? 0 : 1;
  if (item.kind === "string") {
    const rank = qualifierRank(item.value);
    return rank < RELEASE_INDEX ? -1 : rank > RELEASE_INDEX ? 1 : 0;
  }
  for (const inner of item.items) {
    const result = compareWithNothing(inner);
    if (result !== 0) return result;
  }
  return 0;
}

function compareItems(a: Item | undefined, b: Item | undefined): number {
  if (a === undefined) return b === undefined ? 0 : -compareWithNothing(b);
  if (b === undefined) return compareWithNothing(a);
  if (a.kind === "int") {
    if (b.kind === "int") return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
    return 1; // a number is newer than a qualifier or a sublist
  }
  if (a.kind === "string") {
    if (b.kind === "int" || b.kind === "list") return -1;
    const ra = qualifierRank(a.value);
    const rb = qualifierRank(b.value);
    return ra < rb ? -1 : ra > rb ? 1 : 0;
  }
  if (b.kind === "int") return -1;
  if (b.kind === "string") return 1;
  const length = Math.max(a.items.length, b.items.length);
  for (let i = 0; i < length; i++) {
    const result = compareItems(a.items[i], b.items[i]);
    if (result !== 0) return result;
  }
  return 0;
}

/**
 * Compares two Maven versions by Maven's ComparableVersion rules: negative when `a` is older, 0
 * when Maven deems them equal (`1.0` and `1.0.0`, `1.0-ga`), positive when newer. Examples in
 * order: 1.0-alpha-1 < 1.0-beta < 1.0-rc1 < 1.0-SNAPSHOT < 1.0 < 1.0-sp1 < 1.0-0.cgr.1 < 1.0.1.
 */
export function compareMavenVersions(a: string, b: string): number {
  return compareItems({ kind: "list", items: parse(a) }, { kind: "list", items: parse(b) });
}
