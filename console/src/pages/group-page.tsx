import { useState } from "react";
import { listAll } from "wharf/sdk";
import { ApiError } from "../components/api-error";
import { Breadcrumbs } from "../components/breadcrumbs";
import { ConfirmButton } from "../components/confirm-button";
import { CreateForm } from "../components/create-form";
import { EmptyState } from "../components/empty-state";
import { Loading } from "../components/loading";
import { ChoiceField } from "../components/select-field";
import { collect } from "../lib/collect";
import { formatAgo, formatTime, pathWithUid } from "../lib/format";
import { useGroupPath, useRegistryHost } from "../lib/paths";
import {
  matchingNames,
  parseRepoQuery,
  REPO_PAGE_SIZE,
  REPO_SORTS,
  type RepoQuery,
  repoQueryString,
} from "../lib/repo-query";
import { Link, useLocation, useNavigate, useSearchParams } from "../lib/router";
import { useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";

/** Most repositories a name search looks through. */
const SEARCH_LIMIT = 5000;

/** A group's repositories: search by name, sort, pages, create and delete. */
export default function GroupPage(params: Record<string, string>) {
  const uid = params["*"] ?? "";
  const client = useClient();
  const path = useGroupPath(uid);
  const host = useRegistryHost();
  const query = parseRepoQuery(useSearchParams());
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const [searchText, setSearchText] = useState(query.search);
  const go = (next: RepoQuery) => navigate(`${pathname}${repoQueryString(next)}`, { replace: true });

  const repos = useQuery(async () => {
    const request = { uidp: { childrenOf: uid }, orderBy: query.sort };
    if (query.search) {
      const all = matchingNames(
        await collect(listAll(client.registry.repos.listRepos, request), SEARCH_LIMIT),
        query.search,
      );
      const start = query.page * REPO_PAGE_SIZE;
      return { repos: all.slice(start, start + REPO_PAGE_SIZE), total: all.length };
    }
    const page = await client.registry.repos.listRepos({
      ...request,
      pageSize: REPO_PAGE_SIZE,
      skip: query.page * REPO_PAGE_SIZE,
    });
    return { repos: page.repos, total: Number(page.totalCount ?? page.repos.length) };
  }, [client, uid, query.search, query.sort, query.page]);

  const imagePrefix = [host.data, ...(path.data ?? []).map((s) => s.name)].filter(Boolean).join("/");
  const pages = Math.max(1, Math.ceil((repos.data?.total ?? 0) / REPO_PAGE_SIZE));
  const name = path.data?.at(-1)?.name ?? uid;

  return (
    <main id="main">
      <Breadcrumbs steps={(path.data ?? []).slice(0, -1)} current={name} />
      <h1>Repositories of {name}</h1>
      <ApiError error={path.error} />
      <CreateForm
        label="New repository"
        field="repo.name"
        submitLabel="Create repository"
        hint="Lowercase letters, digits and . _ - separators."
        onCreate={async (repoName) => {
          const repo = await client.registry.repos.createRepo({ parent: uid, repo: { name: repoName } });
          navigate(pathWithUid("/repos", repo.uid));
        }}
      />
      <search>
        <form
          className="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            go({ ...query, search: searchText.trim(), page: 0 });
          }}
        >
          <div className="field">
            <label htmlFor="repo-search">Search by name</label>
            <input
              id="repo-search"
              type="search"
              value={searchText}
              onChange={(e) => setSearchText(e.target.value)}
              spellCheck={false}
            />
          </div>
          <button type="submit">Search</button>
          <ChoiceField
            label="Sort"
            value={query.sort}
            choices={REPO_SORTS}
            onChange={(sort) => go({ ...query, sort, page: 0 })}
          />
        </form>
      </search>
      <ApiError error={repos.error} />
      {repos.loading && !repos.data && <Loading what="Loading repositories" />}
      {repos.data && repos.data.total === 0 && !query.search && (
        <EmptyState title="No repositories yet">
          <p>Create one above, or push an image and the repository is created for you:</p>
          <pre className="command">
            skopeo copy docker://docker.io/library/alpine:latest docker://{imagePrefix || "<registry>/<org>"}
            /app:latest
          </pre>
          <p className="muted">
            Sign the registry in first: <code>wharf auth configure-docker</code>.
          </p>
        </EmptyState>
      )}
      {repos.data && repos.data.total === 0 && query.search && (
        <EmptyState title={`No repository name contains “${query.search}”`}>
          <p>Check the spelling, or clear the search to see every repository.</p>
        </EmptyState>
      )}
      {repos.data && repos.data.repos.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Repositories</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Updated</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {repos.data.repos.map((r) => (
                  <tr key={r.uid}>
                    <td>
                      <Link to={pathWithUid("/repos", r.uid)}>{r.name}</Link>
                    </td>
                    <td>{r.description}</td>
                    <td title={formatTime(r.updateTime)}>{formatAgo(r.updateTime)}</td>
                    <td>
                      <ConfirmButton
                        label={`Delete ${r.name}`}
                        title={`Delete ${r.name}?`}
                        onConfirm={async () => {
                          await client.registry.repos.deleteRepo({ uid: r.uid });
                          repos.reload();
                        }}
                      >
                        <p>
                          This deletes the repository <strong>{r.name}</strong> with its tags and their
                          history.
                        </p>
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages">
            <button
              type="button"
              className="secondary"
              disabled={query.page === 0}
              onClick={() => go({ ...query, page: query.page - 1 })}
            >
              Previous
            </button>
            <span>
              Page {query.page + 1} of {pages} ({repos.data.total} repositories)
            </span>
            <button
              type="button"
              className="secondary"
              disabled={query.page + 1 >= pages}
              onClick={() => go({ ...query, page: query.page + 1 })}
            >
              Next
            </button>
          </nav>
        </>
      )}
    </main>
  );
}
