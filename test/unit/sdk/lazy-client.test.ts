import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { WharfApiError } from "../../../src/sdk/errors.js";
import type { FetchFunction } from "../../../src/sdk/http.js";
import { createLazyWharfClient, type EntryLoader, lazyClients } from "../../../src/sdk/lazy-client.js";
import { listAll } from "../../../src/sdk/pages.js";
import { SERVICE_LOADERS } from "../../../src/sdk/service-loaders.js";
import { WHARF_SERVICES } from "../../../src/sdk/services.js";
import { staticToken } from "../../../src/sdk/token-sources.js";
import { connectWebTransport } from "../../../src/sdk/web-transports.js";

const API = "http://wharf.test";
const TAGS = ["a", "b", "c", "d", "e"];

/**
 * A Connect JSON server in a fetch: ListTags pages over TAGS (the page token is the offset),
 * GetTag is NOT_FOUND with a reason, and ListGroups answers no groups. Records each call's path
 * and authorization.
 */
function fakeServer(calls: { path: string; authorization: string | null }[] = []): FetchFunction {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push({ path: url.pathname, authorization: new Headers(init?.headers).get("authorization") });
    const json = (status: number, body: unknown) =>
      new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    const body = JSON.parse((await new Response(init?.body ?? null).text()) || "{}") as {
      pageToken?: string;
      pageSize?: number;
    };
    switch (url.pathname) {
      case "/platform.registry.v2.TagsService/ListTags": {
        const offset = Number(body.pageToken || "0");
        const size = body.pageSize || 2;
        const next = offset + size < TAGS.length ? String(offset + size) : "";
        return json(200, {
          tags: TAGS.slice(offset, offset + size).map((name) => ({ name })),
          nextPageToken: next,
        });
      }
      case "/platform.registry.v2.TagsService/GetTag":
        return json(404, { code: "not_found", message: "tag acme/app:nope not found" });
      case "/platform.iam.v2.GroupsService/ListGroups":
        return json(200, { groups: [], nextPageToken: "" });
      default:
        return json(404, { code: "unimplemented", message: `no ${url.pathname}` });
    }
  };
}

/** SERVICE_LOADERS, counting each entry's loads; `failFirst` entries fail their first load. */
function countingLoaders(failFirst: string[] = []) {
  const loads = new Map<string, number>();
  const loaders: Record<string, EntryLoader> = {};
  for (const [key, loader] of Object.entries(SERVICE_LOADERS) as [string, EntryLoader][]) {
    loaders[key] = {
      kind: loader.kind,
      load: async () => {
        const n = (loads.get(key) ?? 0) + 1;
        loads.set(key, n);
        if (n === 1 && failFirst.includes(key))
          throw new TypeError("Failed to fetch dynamically imported module");
        return loader.load();
      },
    };
  }
  return { loaders, loads };
}

/** The lazy clients of `loaders` on a transport to the fake server. */
function clientsOn(
  loaders: Record<string, EntryLoader>,
  calls?: { path: string; authorization: string | null }[],
) {
  const transport = connectWebTransport()({ baseUrl: API, interceptors: [], fetch: fakeServer(calls) });
  // The same shape as WharfClient's service part (what createLazyWharfClient spreads in).
  return lazyClients(loaders, transport) as unknown as Pick<
    ReturnType<typeof createLazyWharfClient>,
    "registry" | "iam" | "ping" | "registryV1"
  >;
}

describe("the lazy client", () => {
  it("loads a domain's services on its first call, not before, once, and no other domain", async () => {
    const { loaders, loads } = countingLoaders();
    const client = clientsOn(loaders);
    const listTags = client.registry.tags.listTags;
    assert.equal(typeof listTags, "function");
    assert.equal(loads.size, 0, "reading a method loads nothing");

    const [first, second] = await Promise.all([
      listTags({ pageSize: 2 }),
      client.registry.repos.getRepo({ uid: "x" }).catch((err: unknown) => err),
    ]);
    assert.deepEqual(
      first.tags.map((t) => t.name),
      ["a", "b"],
    );
    assert.equal(first.nextPageToken, "2");
    assert.ok(second instanceof WharfApiError, "another service of the domain works too");
    assert.deepEqual([...loads], [["registry", 1]], "only the registry domain, loaded once");

    await client.iam.groups.listGroups({});
    assert.deepEqual(
      [...loads],
      [
        ["registry", 1],
        ["iam", 1],
      ],
    );
  });

  it("keeps the call shape: stable methods, listAll across pages, awaitable domains", async () => {
    const client = clientsOn(countingLoaders().loaders);
    assert.equal(client.registry.tags.listTags, client.registry.tags.listTags, "one function per method");
    assert.equal(client.registry.tags, client.registry.tags, "one object per service");
    const names: string[] = [];
    for await (const tag of listAll(client.registry.tags.listTags, { pageSize: 2 })) names.push(tag.name);
    assert.deepEqual(names, TAGS);
    // Not a thenable: resolving a promise with a domain or a service gives it back as it is.
    assert.equal(await Promise.resolve(client.registry), client.registry);
    assert.equal(await Promise.resolve(client.registry.tags), client.registry.tags);
    assert.equal(String(client.registry), "[object Object]");
  });

  it("rejects with WharfApiError: the server's errors, and UNAVAILABLE for a domain that does not load (retried)", async () => {
    const { loaders, loads } = countingLoaders(["registry"]);
    const client = clientsOn(loaders);
    const failedLoad = await client.registry.tags.listTags({}).catch((err: unknown) => err);
    assert.ok(failedLoad instanceof WharfApiError);
    assert.equal(failedLoad.code, Code.Unavailable);
    assert.match(failedLoad.message, /registry services could not be loaded/);

    const notFound = await client.registry.tags.getTag({ uid: "nope" }).catch((err: unknown) => err);
    assert.ok(
      notFound instanceof WharfApiError,
      "the next call loads again, and the server's error is typed",
    );
    assert.equal(notFound.code, Code.NotFound);
    assert.equal(notFound.message, "tag acme/app:nope not found");
    assert.equal(loads.get("registry"), 2);
  });

  it("a service or method the SDK does not have rejects with a TypeError", async () => {
    const client = clientsOn(countingLoaders().loaders) as unknown as Record<
      string,
      Record<string, Record<string, () => Promise<unknown>>>
    >;
    await assert.rejects(() => client.registry?.nothing?.listNothing?.() ?? Promise.resolve(), {
      name: "TypeError",
      message: "the SDK has no service registry.nothing",
    });
    await assert.rejects(() => client.registry?.tags?.listNothing?.() ?? Promise.resolve(), {
      name: "TypeError",
      message: "the SDK has no method registry.tags.listNothing",
    });
  });

  it("SERVICE_LOADERS load exactly WHARF_SERVICES, each entry from its own module", async () => {
    assert.deepEqual(Object.keys(SERVICE_LOADERS).sort(), Object.keys(WHARF_SERVICES).sort());
    for (const [key, loader] of Object.entries(SERVICE_LOADERS) as [string, EntryLoader][]) {
      const expected = WHARF_SERVICES[key as keyof typeof WHARF_SERVICES];
      assert.equal(
        loader.kind,
        "kind" in expected && expected.kind === "service" ? "service" : "domain",
        key,
      );
      assert.deepEqual(await loader.load(), expected, key);
    }
  });

  it("createLazyWharfClient: calls carry the token source's bearer, and the client's other parts are there", async () => {
    const calls: { path: string; authorization: string | null }[] = [];
    const client = createLazyWharfClient({
      apiUrl: `${API}/ignored/path`,
      tokenSource: staticToken("t0k"),
      fetch: fakeServer(calls),
    });
    assert.equal(client.apiUrl, API);
    assert.equal(typeof client.tagHistory, "function");
    assert.equal(typeof client.whoAmI, "function");
    const page = await client.registry.tags.listTags({ pageSize: 5 });
    assert.equal(page.tags.length, 5);
    assert.deepEqual(calls, [
      { path: "/platform.registry.v2.TagsService/ListTags", authorization: "Bearer t0k" },
    ]);
  });
});
