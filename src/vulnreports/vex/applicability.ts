import type { VexStatementRecord, VexStatementRow } from "../../storage/vex-store.js";
import type { VulnMatchRecord } from "../../storage/vuln-report-store.js";
import type { VexDocument, VexProduct } from "./openvex.js";
import { parsePurl, purlCovers } from "./purl.js";

/**
 * Whether a statement's product names the image `digest`: its `@id` or `identifiers.purl` is the
 * digest itself (`sha256:…`) or an OCI purl of it (`pkg:oci/<name>@sha256%3A…`, any name and
 * qualifiers: the digest alone identifies the image), or its `hashes["sha-256"]` is the digest's hex.
 */
export function productNamesImage(product: VexProduct, digest: string): boolean {
  const hex = digest.startsWith("sha256:") ? digest.slice("sha256:".length) : "";
  if (product.sha256 !== "" && product.sha256 === hex) return true;
  for (const id of [product.id, product.purl]) {
    if (id === "") continue;
    if (id === digest) return true;
    const purl = parsePurl(id);
    if (purl?.type === "oci" && purl.version === digest) return true;
  }
  return false;
}

/**
 * The statements of `doc` as stored for image `digest`: each marked `applies` when one of its
 * products names the image, with the subcomponents of those products (none: the statement is
 * about the whole image).
 */
export function statementRecords(doc: VexDocument, digest: string): VexStatementRecord[] {
  return doc.statements.map((s) => {
    const naming = s.products.filter((p) => productNamesImage(p, digest));
    const whole = naming.some((p) => p.subcomponents.length === 0);
    return {
      vulnerability: s.vulnerability,
      aliases: s.aliases,
      status: s.status,
      justification: s.justification,
      impactStatement: s.impactStatement,
      actionStatement: s.actionStatement,
      effectiveTime: s.effectiveTime,
      applies: naming.length > 0,
      subcomponents: whole ? [] : [...new Set(naming.flatMap((p) => p.subcomponents))],
    };
  });
}

/** Statuses that suppress a match. */
const SUPPRESSING = new Set(["not_affected", "fixed"]);

/** What VEX says of one match: the statement that decides it, and whether it suppresses it. */
export interface VexVerdict {
  suppressed: boolean;
  statement: VexStatementRow;
}

/** Whether statement `s` is about match `m`: a shared vulnerability id or alias, and its subcomponents. */
export function statementCovers(
  s: Pick<VexStatementRecord, "vulnerability" | "aliases" | "subcomponents">,
  m: Pick<VulnMatchRecord, "vulnerabilityId" | "aliases" | "purl">,
): boolean {
  const ids = new Set([m.vulnerabilityId, ...m.aliases]);
  if (!ids.has(s.vulnerability) && !s.aliases.some((a) => ids.has(a))) return false;
  return s.subcomponents.length === 0 || s.subcomponents.some((sub) => purlCovers(sub, m.purl));
}

/**
 * For each match, the verdict of the applicable statements (`statements`: oldest document first,
 * document order within one) that cover it, or undefined when none does. The deciding statement is
 * the newest by effective time (a statement's timestamp, else its document's); on equal times the
 * one stored later. It suppresses the match when it says `not_affected` or `fixed`; a newer
 * `affected` or `under_investigation` takes a suppression back.
 */
export function vexVerdicts(
  matches: readonly VulnMatchRecord[],
  statements: readonly VexStatementRow[],
): (VexVerdict | undefined)[] {
  return matches.map((m) => {
    let decider: VexStatementRow | undefined;
    for (const s of statements) {
      if (!statementCovers(s, m)) continue;
      if (!decider || s.effectiveTime >= decider.effectiveTime) decider = s;
    }
    return decider && { suppressed: SUPPRESSING.has(decider.status), statement: decider };
  });
}
