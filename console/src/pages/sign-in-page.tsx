import { type FormEvent, useState } from "react";
import { ApiError, TextField } from "../components/api-error";
import { normalizeToken } from "../lib/session";
import { useWharf } from "../lib/wharf-context";

/** Sign in: paste a platform API token (e.g. from `wharf auth token` or `wharf admin token`). */
export default function SignInPage() {
  const { signIn } = useWharf();
  const [pasted, setPasted] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [shapeProblem, setShapeProblem] = useState<string>();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const token = normalizeToken(pasted);
    if (!token) {
      setShapeProblem("This is not a token: a token has three parts separated by dots.");
      return;
    }
    setShapeProblem(undefined);
    setBusy(true);
    setError(undefined);
    try {
      await signIn({ token, method: "token" });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Wharf</h1>
      <section aria-labelledby="paste-heading" className="card">
        <h2 id="paste-heading">With a token</h2>
        <p className="muted">
          For administrators and development: paste a platform API token, for example the output of{" "}
          <code>wharf auth token</code> or <code>wharf admin token</code>. It is kept in this tab only.
        </p>
        <form onSubmit={submit}>
          <TextField
            label="Token"
            field="token"
            error={error}
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={pasted}
            onChange={(e) => setPasted(e.target.value)}
            required
          />
          {shapeProblem && (
            <p className="field-error" role="alert">
              {shapeProblem}
            </p>
          )}
          <ApiError error={error} />
          <button type="submit" disabled={busy}>
            {busy ? "Signing in…" : "Sign in"}
          </button>
        </form>
      </section>
    </main>
  );
}
