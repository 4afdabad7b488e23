// A small router on the History API (ADR 0032): paths like `/orgs/:uid`, links that push history
// entries, and the back/forward buttons. The console has a dozen flat routes, so a library would
// add weight and nothing it needs.
import {
  type AnchorHTMLAttributes,
  createContext,
  type MouseEvent,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
} from "react";

/** Where the app is: the path and the query string (with its `?`, or ""). */
export interface AppLocation {
  pathname: string;
  search: string;
}

interface RouterValue {
  location: AppLocation;
  navigate(to: string, options?: { replace?: boolean }): void;
}

const RouterContext = createContext<RouterValue | null>(null);

/**
 * The variables of `pattern` (`/repos/:uid`) in `pathname`, decoded, or null when it does not
 * match. Segments compare exactly; a trailing slash is ignored; `*` as the last segment takes the
 * rest of the path (as `params["*"]`).
 */
export function matchPath(pattern: string, pathname: string): Record<string, string> | null {
  const want = split(pattern);
  const have = split(pathname);
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment === "*" && i === want.length - 1) {
      params["*"] = have.slice(i).map(decode).join("/");
      return params;
    }
    const value = have[i];
    if (value === undefined) return null;
    if (segment.startsWith(":")) params[segment.slice(1)] = decode(value);
    else if (segment !== value) return null;
  }
  return have.length === want.length ? params : null;
}

function split(path: string): string[] {
  return path.split("/").filter((s) => s !== "");
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function currentLocation(): AppLocation {
  return { pathname: window.location.pathname, search: window.location.search };
}

/** Provides the location to {@link useLocation} and {@link useNavigate}, following history changes. */
export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(currentLocation);
  useEffect(() => {
    const onPop = () => setLocation(currentLocation());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const navigate = useCallback((to: string, options: { replace?: boolean } = {}) => {
    if (options.replace) window.history.replaceState(null, "", to);
    else window.history.pushState(null, "", to);
    setLocation(currentLocation());
    window.scrollTo?.(0, 0);
  }, []);
  const value = useMemo(() => ({ location, navigate }), [location, navigate]);
  return <RouterContext.Provider value={value}>{children}</RouterContext.Provider>;
}

function useRouter(): RouterValue {
  const router = useContext(RouterContext);
  if (!router) throw new Error("useRouter outside RouterProvider");
  return router;
}

/** The current location. */
export function useLocation(): AppLocation {
  return useRouter().location;
}

/** Goes to a path of the app (a new history entry unless `replace`). */
export function useNavigate(): RouterValue["navigate"] {
  return useRouter().navigate;
}

/** The query string's parameters of the current location. */
export function useSearchParams(): URLSearchParams {
  const { search } = useLocation();
  return useMemo(() => new URLSearchParams(search), [search]);
}

/** An `<a href>` that navigates inside the app on a plain click (modified clicks open as usual). */
export function Link({
  to,
  ...rest
}: { to: string } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, "href">) {
  const navigate = useNavigate();
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a {...rest} href={to} onClick={onClick} />;
}
