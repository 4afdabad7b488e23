/** `%`, `_` and the escape character itself match literally in a LIKE pattern with `escape '\'`. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A LIKE pattern (with `escape '\'`) matching any text containing `text` lower-cased. */
export function likeContainingLower(text: string): string {
  return `%${likeLiteral(text.toLowerCase())}%`;
}
