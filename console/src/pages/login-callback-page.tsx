import { useEffect, useRef, useState } from "react";
import { ApiError } from "../components/api-error";
import { Loading } from "../components/loading";
import { finishBrowserLogin } from "../lib/browser-login";
import { Link, useNavigate } from "../lib/router";
import { useWharf } from "../lib/wharf-context";

/** Where the identity provider's login comes back: redeems the one-time code and signs in. */
export default function LoginCallbackPage() {
  const { signIn } = useWharf();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>();
  const started = useRef(false);

  useEffect(() => {
    // Once only (StrictMode runs effects twice): the code and the pending login are single-use.
    if (started.current) return;
    started.current = true;
    const origin = window.location.origin;
    finishBrowserLogin(origin, new URLSearchParams(window.location.search))
      .then(async ({ tokens, returnTo }) => {
        await signIn({ token: tokens.token, method: "browser", expiry: tokens.expiry });
        navigate(returnTo, { replace: true });
      })
      .catch(setError);
  }, [signIn, navigate]);

  return (
    <main id="main" className="sign-in">
      <h1>Signing in</h1>
      {error ? (
        <>
          <ApiError error={error} />
          <p>
            <Link to="/">Back to sign in</Link>
          </p>
        </>
      ) : (
        <Loading what="Finishing the login" />
      )}
    </main>
  );
}
