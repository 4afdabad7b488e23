import { useCallback, useState } from "react";

/**
 * Page-token paging for lists without random access: the token of the current page, and
 * next/previous moves (previous pages' tokens are remembered). `reset` goes back to the first page.
 */
export function useTokenPages() {
  const [tokens, setTokens] = useState<string[]>([""]);
  const current = tokens.at(-1) ?? "";
  const next = useCallback((token: string) => setTokens((t) => [...t, token]), []);
  const previous = useCallback(() => setTokens((t) => (t.length > 1 ? t.slice(0, -1) : t)), []);
  const reset = useCallback(() => setTokens([""]), []);
  return { token: current, page: tokens.length, next, previous, reset };
}
