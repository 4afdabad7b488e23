import { EmptyState } from "../components/empty-state";
import { pathWithUid } from "../lib/format";
import { Link } from "../lib/router";
import { useWharf } from "../lib/wharf-context";

/** The start page: who is signed in, and their groups with role and capabilities. */
export default function HomePage() {
  const { me } = useWharf();
  return (
    <main id="main">
      <h1>Welcome{me ? `, ${me.identity.name || me.identity.email || me.identity.uid}` : ""}</h1>
      {me && (
        <dl className="facts">
          <dt>Identity</dt>
          <dd>
            <code>{me.identity.uid}</code>
          </dd>
          {me.identity.email && (
            <>
              <dt>Email</dt>
              <dd>{me.identity.email}</dd>
            </>
          )}
          {me.admin && (
            <>
              <dt>Role</dt>
              <dd>Server administrator</dd>
            </>
          )}
        </dl>
      )}
      <h2>Your groups</h2>
      {me && me.groups.length === 0 && (
        <EmptyState title="No role bindings yet">
          <p>
            {me.admin
              ? "As the administrator you can open every organization."
              : "Ask an organization's owner for an invite, or for a role binding to your identity."}{" "}
            <Link to="/orgs">Browse organizations</Link>.
          </p>
        </EmptyState>
      )}
      {me && me.groups.length > 0 && (
        <table className="groups">
          <caption className="visually-hidden">Groups where you hold a role</caption>
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">Role</th>
              <th scope="col">Capabilities</th>
              <th scope="col">Dashboard</th>
            </tr>
          </thead>
          <tbody>
            {me.groups.map((g) => (
              <tr key={g.uid}>
                <td>
                  <Link to={pathWithUid("/groups", g.uid)}>{g.name || g.uid}</Link>
                </td>
                <td>{g.role.name}</td>
                <td className="caps">{g.capabilities.join(", ")}</td>
                <td>
                  <Link to={pathWithUid("/dashboard", g.uid)} aria-label={`Dashboard of ${g.name || g.uid}`}>
                    Dashboard
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
