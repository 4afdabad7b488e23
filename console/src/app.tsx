import { lazy, Suspense } from "react";
import { Loading } from "./components/loading";
import { SearchBox } from "./components/search/search-box";
import { SkipLink } from "./components/skip-link";
import { LOGIN_CALLBACK_PATH } from "./lib/browser-login";
import { Link, matchPath, useLocation } from "./lib/router";
import { useWharf } from "./lib/wharf-context";
import SignInPage from "./pages/sign-in-page";
import { NAV, NOT_FOUND, ROUTES } from "./routes";

const LoginCallbackPage = lazy(() => import("./pages/login-callback-page"));

/** The page for `pathname` and its path variables. */
function pageFor(pathname: string) {
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, pathname);
    if (params) return { Page: route.page, params };
  }
  return { Page: NOT_FOUND, params: {} };
}

/** The shell: skip link, header (navigation, who is signed in, sign out) and the current page. */
export function App() {
  const { session, me, signOut } = useWharf();
  const { pathname } = useLocation();
  if (pathname === LOGIN_CALLBACK_PATH) {
    return (
      <Suspense fallback={<Loading />}>
        <LoginCallbackPage />
      </Suspense>
    );
  }
  if (!session) return <SignInPage />;
  const { Page, params } = pageFor(pathname);
  return (
    <>
      <SkipLink />
      <header className="app-header">
        <Link to="/" className="brand">
          Wharf
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((entry) => {
              const current = pathname === entry.to || entry.prefixes.some((p) => pathname.startsWith(p));
              return (
                <li key={entry.to}>
                  <Link to={entry.to} aria-current={current ? "page" : undefined}>
                    {entry.label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
        <SearchBox />
        <div className="who">
          <span data-testid="signed-in-as" title={me?.identity.uid}>
            {me ? me.identity.email || me.identity.name || me.identity.uid : "…"}
          </span>
          {me?.admin && <span className="badge">admin</span>}
          <button type="button" className="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <Suspense fallback={<Loading />}>
        <Page key={pathname} {...params} />
      </Suspense>
    </>
  );
}
