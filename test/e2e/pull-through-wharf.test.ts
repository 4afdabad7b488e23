import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { secretBoxOf } from "../../src/core/secret-box.js";
import { newChildUid } from "../../src/core/uidp.js";
import { onOneEngine } from "../support/databases.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, type SkopeoResult, skopeoSkip } from "../support/skopeo.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const PUSH = "dev.wharf.registry.push.v1";

function ok(r: SkopeoResult, what: string): string {
  assert.equal(r.code, 0, `${what} failed: ${r.stderr}`);
  return r.stdout;
}

onOneEngine("pull-through cache with a second Wharf as upstream (Bearer token flow)", () => {
  describe("pulls", { skip: skopeoSkip }, () => {
    let upstream: TestServer;
    let wharf: TestServer;
    let receiver: WebhookReceiver;
    let work: string;
    let image: ImageLayoutResult;
    let upstreamToken: string;
    let token: string;
    let acme: string;

    async function addUpstream(name: string, username: string, password: string) {
      const now = Date.now();
      await wharf.store.upstreams.insert({
        uid: newChildUid(acme),
        orgUid: acme,
        name,
        url: upstream.registryUrl,
        username,
        passwordSealed: await secretBoxOf(wharf.store.settings).seal(password),
        tagTtlMs: 60_000,
        createTime: now,
        updateTime: now,
      });
    }

    before(async () => {
      upstream = await startTestServer();
      await upstream.create("/iam/v2/groups", { name: "beta" });
      upstreamToken = await upstream.registryToken();
      work = await mkdtemp(join(tmpdir(), "wharf-pull-through-wharf-"));
      image = await writeImageLayout(join(work, "source"), {
        tag: "v1",
        files: { "hello.txt": "from beta\n" },
      });
      ok(
        await runSkopeo([
          ...["copy", "--dest-tls-verify=false", "--dest-creds", `_token:${upstreamToken}`],
          ...[`oci:${join(work, "source")}:v1`, `docker://${new URL(upstream.registryUrl).host}/beta/app:v1`],
        ]),
        "seeding the upstream Wharf",
      );
      wharf = await startTestServer({
        config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" },
        events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
      });
      receiver = await startWebhookReceiver();
      token = await wharf.registryToken();
      acme = await wharf.create("/iam/v2/groups", { name: "acme" });
      await wharf.create(`/events/v2/subscriptions/${acme}`, { sink: receiver.url() });
      await addUpstream("beta", "_token", upstreamToken);
      await addUpstream("wrong", "_token", "not-the-password-at-all");
    });
    after(async () => {
      await wharf?.close();
      await upstream?.close();
      await receiver?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("pulls through the upstream's token flow with the Upstream's credentials, and records push events", async () => {
      const challenge = await fetch(`${upstream.registryUrl}/v2/beta/app/manifests/v1`);
      assert.equal(challenge.status, 401, "the upstream really asks for the token flow");
      ok(
        await runSkopeo([
          ...["copy", "--src-tls-verify=false", "--src-creds", `_token:${token}`],
          ...[
            `docker://${new URL(wharf.registryUrl).host}/acme/beta/beta/app:v1`,
            `oci:${join(work, "pulled")}:v1`,
          ],
        ]),
        "pull through the cache",
      );
      const res = await wharf.registry(`/v2/acme/beta/beta/app/manifests/v1`, {
        token,
        headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
      });
      assert.equal(res.headers.get("docker-content-digest"), image.manifestDigest);
      const pushes = await receiver.waitFor((a) =>
        a.some((d) => d.headers["ce-type"] === PUSH && d.body.includes("acme/beta/beta/app")),
      );
      const push = pushes.find((d) => d.headers["ce-type"] === PUSH);
      assert.ok(push?.body.includes(image.manifestDigest), push?.body);
    });

    it("refused credentials are a 502 that names the upstream, never the password", async () => {
      const res = await wharf.registry("/v2/acme/wrong/beta/app/manifests/v1", {
        token,
        headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
      });
      assert.equal(res.status, 502);
      const text = await res.text();
      assert.match(text, /acme\/wrong/);
      assert.match(text, /unauthorized/);
      assert.ok(!text.includes("not-the-password-at-all"));
      for (const line of wharf.logLines) assert.ok(!JSON.stringify(line).includes("not-the-password-at-all"));
    });
  });
});
