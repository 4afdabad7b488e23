/**
 * Which release cycle a tag belongs to: the cycle whose name is the LONGEST prefix of the tag name
 * that ends at a non-digit boundary, i.e. the tag ends right after the prefix or its next character
 * is not a digit. So `3.10` and `3.10.4-slim` belong to `3.10` (not `3`), and `3.1` never matches
 * `3.10` (the prefix `3.1` is followed by the digit `0`). Undefined when no cycle fits.
 */
export function cycleOfTag<C extends { cycle: string }>(
  tagName: string,
  cycles: readonly C[],
): C | undefined {
  let best: C | undefined;
  for (const candidate of cycles) {
    const name = candidate.cycle;
    if (name === "" || !tagName.startsWith(name)) continue;
    if (isDigit(tagName.charAt(name.length))) continue;
    if (best === undefined || name.length > best.cycle.length) best = candidate;
  }
  return best;
}

function isDigit(char: string): boolean {
  return char >= "0" && char <= "9";
}
