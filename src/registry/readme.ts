import { invalidArgument } from "../core/errors.js";

/** Largest readme accepted, in characters. */
export const MAX_README_LENGTH = 1024 * 1024;

// Markdown may carry raw HTML; anything that can run script or embed foreign content is refused
// rather than stripped, so what is stored is exactly what the author wrote.
const UNSAFE_HTML = [
  /<\s*(script|iframe|object|embed|style|link|meta|base|form|frame|frameset|svg|math)\b/i,
  /\son[a-z]+\s*=/i,
  /(href|src|action|formaction)\s*=\s*["']?\s*(javascript|vbscript|data):/i,
];

/** Throws INVALID_ARGUMENT on `content` when the readme is too large or contains unsafe HTML. */
export function validateReadme(content: string): void {
  if (content.length > MAX_README_LENGTH) {
    throw invalidArgument("content", `readme must be at most ${MAX_README_LENGTH} characters`);
  }
  if (UNSAFE_HTML.some((re) => re.test(content))) {
    throw invalidArgument("content", "readme contained unsafe html content");
  }
}
