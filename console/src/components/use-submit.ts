import { type FormEvent, useCallback, useState } from "react";

/** The state of a form that calls the API: whether it is sending, and the last failure. */
export interface Submit {
  busy: boolean;
  error: unknown;
  /** A form's onSubmit: prevents the page load, runs `action` once at a time, keeps its failure. */
  handler(action: () => Promise<void>): (event: FormEvent) => void;
}

/** One form's submission state (see {@link Submit}); a new submission clears the old failure. */
export function useSubmit(): Submit {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const handler = useCallback(
    (action: () => Promise<void>) => (event: FormEvent) => {
      event.preventDefault();
      if (busy) return;
      setBusy(true);
      setError(undefined);
      action().then(
        () => setBusy(false),
        (err: unknown) => {
          setError(err);
          setBusy(false);
        },
      );
    },
    [busy],
  );
  return { busy, error, handler };
}
