/** Tag patterns as the form takes them: separated by spaces or commas (tags and globs hold neither). */
export function parsePatterns(text: string): string[] {
  return text.split(/[\s,]+/).filter((p) => p !== "");
}

/** Tag patterns as the form shows them. */
export function formatPatterns(patterns: readonly string[]): string {
  return patterns.join(" ");
}
