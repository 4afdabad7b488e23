import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { createWharfClient } from "../../src/sdk/client.js";
import { isWharfApiError } from "../../src/sdk/errors.js";
import { staticToken } from "../../src/sdk/token-sources.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// ADR 0061: the SDK's registry reads send the client's token, exchanged once at the STS for the
// registry audience, straight to the registry; `/token` keeps refusing API-audience tokens.

describe("the SDK's registry credential: one exchange, then straight to the registry", () => {
  let wharf: TestServer;
  let pullerApi: string;

  before(async () => {
    wharf = await startTestServer();
    const adminReg = await wharf.registryToken();
    const acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create("/iam/v2/groups", { name: "globex" });
    await pushImage(wharf, "acme/app", "latest", adminReg, "acme-app");
    await pushImage(wharf, "acme/web", "latest", adminReg, "acme-web");
    await pushImage(wharf, "globex/app", "latest", adminReg, "globex-app");
    const puller = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "puller",
      claimMatch: { issuer: "https://ci.example.com", subject: "puller" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, {
      identityUid: puller,
      roleUid: builtInRoleUid("registry.pull"),
    });
    pullerApi = await wharf.tokenFor(puller);
  });
  after(() => wharf.close());

  /** A client of the puller that records the path of every request it makes. */
  function recordingClient() {
    const requests: string[] = [];
    const client = createWharfClient({
      apiUrl: wharf.apiUrl,
      tokenSource: staticToken(pullerApi),
      fetch: (input, init) => {
        requests.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
        return fetch(input, init);
      },
    });
    return { client, requests };
  }

  it("reads two repositories' histories with one config read and one exchange, and no /token", async () => {
    const { client, requests } = recordingClient();
    client.prepareRegistry();
    const records = [];
    for await (const r of client.tagHistory("acme/app", "latest")) records.push(r);
    for await (const r of client.tagHistory("acme/web", "latest")) records.push(r);
    assert.equal(records.length, 2);
    assert.match(await client.resolve("acme/app:latest"), /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(requests, [
      "/auth/v1/config",
      "/sts/exchange",
      "/v2/acme/app/_service/history/latest",
      "/v2/acme/web/_service/history/latest",
      "/v2/acme/app/manifests/latest",
    ]);
  });

  it("gets no more than the identity's current rights: another organization's repository is refused", async () => {
    const { client } = recordingClient();
    await assert.rejects(
      async () => {
        for await (const _ of client.tagHistory("globex/app", "latest")) {
          // nothing to read
        }
      },
      (err: unknown) => isWharfApiError(err) && (err.httpStatus === 403 || err.httpStatus === 404),
    );
  });

  it("leaves the registry host's audience rule as it was: /token refuses an API-audience token", async () => {
    const query = new URLSearchParams({
      service: new URL(wharf.registryUrl).host,
      scope: "repository:acme/app:pull",
    });
    const refused = await wharf.registry(`/token?${query}`, {
      headers: { authorization: `Bearer ${pullerApi}` },
    });
    assert.equal(refused.status, 403);
  });
});
