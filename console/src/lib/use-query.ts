import { type DependencyList, useCallback, useEffect, useState } from "react";

/** The state of one asynchronous read. */
export interface Query<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Runs the read again (after a change). */
  reload(): void;
}

/**
 * Runs `load` when `deps` change and keeps its latest answer or error; an answer that arrives
 * after newer deps started (or after unmount) is dropped.
 */
export function useQuery<T>(load: () => Promise<T>, deps: DependencyList): Query<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `load` is a fresh closure over `deps`.
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
