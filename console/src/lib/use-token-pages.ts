import { useCallback, useState } from "react";

/** The state and moves of {@link useTokenPages}. */
export interface TokenPages {
  /** The current page's token ("" for the first page). */
  token: string;
  /** 1-based. */
  page: number;
  next(token: string): void;
  previous(): void;
  reset(): void;
}

/**
 * Page-token paging for lists without random access: the token of the current page, and
 * next/previous moves (previous pages' tokens are remembered). `reset` goes back to the first page.
 */
export function useTokenPages(): TokenPages {
  const [tokens, setTokens] = useState<string[]>([""]);
  const current = tokens.at(-1) ?? "";
  const next = useCallback((token: string) => setTokens((t) => [...t, token]), []);
  const previous = useCallback(() => setTokens((t) => (t.length > 1 ? t.slice(0, -1) : t)), []);
  const reset = useCallback(() => setTokens([""]), []);
  return { token: current, page: tokens.length, next, previous, reset };
}
