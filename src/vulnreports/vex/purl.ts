/** A package URL (https://github.com/package-url/purl-spec), its parts decoded. */
export interface Purl {
  type: string;
  namespace: string;
  name: string;
  /** "" when the purl has none. */
  version: string;
  qualifiers: Map<string, string>;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Parses `pkg:type/namespace/name@version?qualifiers#subpath`; undefined when it is not a purl. */
export function parsePurl(text: string): Purl | undefined {
  if (!text.toLowerCase().startsWith("pkg:")) return undefined;
  let rest = text.slice(4).replace(/^\/+/, "");
  const hash = rest.indexOf("#");
  if (hash >= 0) rest = rest.slice(0, hash);
  const qualifiers = new Map<string, string>();
  const question = rest.indexOf("?");
  if (question >= 0) {
    for (const pair of rest.slice(question + 1).split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      qualifiers.set(pair.slice(0, eq).toLowerCase(), decode(pair.slice(eq + 1)));
    }
    rest = rest.slice(0, question);
  }
  let version = "";
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    version = decode(rest.slice(at + 1));
    rest = rest.slice(0, at);
  }
  const parts = rest.split("/").filter((p) => p !== "");
  const type = parts.shift()?.toLowerCase();
  const name = parts.pop();
  if (!type || !name) return undefined;
  return { type, namespace: parts.map(decode).join("/"), name: decode(name), version, qualifiers };
}

/**
 * Whether the purl `wanted` (a VEX subcomponent) names the package `found` (a scanner match's
 * purl): same type, namespace and name; the same version when `wanted` gives one; and each
 * qualifier `wanted` gives equal in `found` (qualifier order does not matter, and qualifiers only
 * `found` has — a scanner's `arch`, `distro` — are ignored). Plain string equality otherwise.
 */
export function purlCovers(wanted: string, found: string): boolean {
  if (wanted === found) return true;
  const w = parsePurl(wanted);
  const f = parsePurl(found);
  if (!w || !f) return false;
  if (w.type !== f.type || w.namespace !== f.namespace || w.name !== f.name) return false;
  if (w.version !== "" && w.version !== f.version) return false;
  for (const [key, value] of w.qualifiers) if (f.qualifiers.get(key) !== value) return false;
  return true;
}
