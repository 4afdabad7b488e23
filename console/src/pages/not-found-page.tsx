import { Link, useLocation } from "../lib/router";

/** A console path that names no page. */
export default function NotFoundPage() {
  const { pathname } = useLocation();
  return (
    <main id="main">
      <h1>Page not found</h1>
      <p>
        The console has no page at <code>{pathname}</code>. <Link to="/">Go to the start page</Link>.
      </p>
    </main>
  );
}
