import { type FormEvent, useState } from "react";
import { ApiError, TextField } from "../components/api-error";
import { startBrowserLogin } from "../lib/browser-login";
import { useLocation, useSearchParams } from "../lib/router";
import { normalizeToken } from "../lib/session";
import { useWharf } from "../lib/wharf-context";

/**
 * Sign in through the browser login (an organization's identity provider, or the server's default
 * one; `?identity_provider=<uid>` pre-fills it), or by pasting a platform API token.
 */
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
      <BrowserLogin />
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

/** The browser login: off to `/oauth`, back on the console's `/login/callback`. */
function BrowserLogin() {
  const params = useSearchParams();
  const { pathname, search } = useLocation();
  const [provider, setProvider] = useState(params.get("identity_provider") ?? "");
  const [error, setError] = useState<unknown>();

  const start = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      const url = await startBrowserLogin({
        origin: window.location.origin,
        identityProvider: provider.trim(),
        returnTo: `${pathname}${search}`,
      });
      window.location.assign(url);
    } catch (err) {
      setError(
        window.isSecureContext
          ? err
          : new Error("The browser login needs the console over https (or on localhost)."),
      );
    }
  };

  return (
    <section aria-labelledby="browser-heading" className="card">
      <h2 id="browser-heading">With your identity provider</h2>
      <form onSubmit={start}>
        <TextField
          label="Organization's identity provider (optional)"
          field="identity_provider"
          error={error}
          hint="Its uid, from your organization's administrator. Leave empty for this server's default login."
          value={provider}
          onChange={(e) => setProvider(e.target.value)}
          spellCheck={false}
        />
        <ApiError error={error} />
        <button type="submit">Continue to sign in</button>
      </form>
    </section>
  );
}
