import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, it } from "node:test";
import { expectError, expectJson } from "../support/api-assertions.js";
import { generateCosignKey, signImage } from "../support/cosign.js";
import { forEachEngine } from "../support/databases.js";
import { personWithRole } from "../support/registered-person.js";
import { OCI_MANIFEST, ociErrorOf, pushImage } from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const GRYPE = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
const SPDX = readFileSync(new URL("../fixtures/sbom/spdx-2.3.json", import.meta.url));

interface Decision {
  allowed?: boolean;
  violations?: { policy: string; rule: string; detail: string; mode: string }[];
  warnings?: string[];
}
interface ApiPolicy {
  uid: string;
  name: string;
  mode: string;
  requireSignature?: boolean;
  denySeverity?: string;
  onlyFixable?: boolean;
  denyEol?: boolean;
  requireSbom?: boolean;
  exemptIdentities?: string[];
}

/** An OpenVEX document (spec v0.2.0) saying `vulnerability` does not affect the image `digest`. */
function openVex(digest: string, vulnerability: string): string {
  return JSON.stringify({
    "@context": "https://openvex.dev/ns/v0.2.0",
    "@id": "https://example.test/vex/policies-1",
    author: "Policy Tests <security@example.test>",
    timestamp: "2026-11-20T10:00:00Z",
    version: 1,
    statements: [
      {
        vulnerability: { name: vulnerability },
        products: [{ "@id": digest }],
        status: "not_affected",
        justification: "vulnerable_code_not_in_execute_path",
      },
    ],
  });
}

forEachEngine(
  "pull policies: CRUD, every rule over the real registry, WARN, exemptions, audit and events",
  (db) => {
    let wharf: TestServer;
    let now = Date.now();
    let admin: string;
    let pushToken: string;
    let org: string;
    let prod: string;
    let repo: string;
    let puller: { uid: string; token: string; registry: string };
    let robot: { uid: string; token: string; registry: string };
    let ownerB: string;
    let subscription: string;
    const key = generateCosignKey("ecdsa-p256");
    const NAME = "acme/prod/api";

    const json = async <T>(path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
      expectJson<T>(await wharf.api(path, { token: admin, ...init }));
    const createPolicy = (parent: string, body: Record<string, unknown>, token = admin) =>
      wharf.api(`/registry/v2/policies/${parent}`, { method: "POST", token, body });
    const pull = (reference: string, token = puller.registry, method = "GET") =>
      wharf.registry(`/v2/${NAME}/manifests/${reference}`, {
        method,
        token,
        headers: { accept: OCI_MANIFEST },
      });
    const evaluate = (digest: string, tag = "") =>
      json<Decision>(`/registry/v2/repos/${repo}/digests/${digest}:evaluate${tag ? `?tag=${tag}` : ""}`);
    const expectDenied = async (res: Response, pattern: RegExp) => {
      assert.equal(res.status, 403);
      const err = await ociErrorOf(res);
      assert.equal(err.code, "DENIED");
      assert.match(err.message, pattern);
      return err.message;
    };
    const expectServed = async (res: Response) => {
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return res;
    };
    /** Waits (polling, no fixed sleep) until `check` holds. */
    const eventually = async (check: () => Promise<boolean>, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!(await check())) {
        if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    before(async () => {
      const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
      wharf = await startTestServer({
        ...(databaseUrl ? { databaseUrl } : {}),
        clock: { now: () => now },
        config: { eolGraceMonths: "0", eventsAllowLoopback: "true" },
        audit: { buffer: { flushMs: 20 } },
      });
      admin = wharf.adminToken;
      pushToken = await wharf.registryToken();
      org = await wharf.create("/iam/v2/groups", { name: "acme" });
      prod = await wharf.create(`/iam/v2/groups/${org}`, { name: "prod" });
      const orgB = await wharf.create("/iam/v2/groups", { name: "other" });
      ownerB = (await personWithRole(wharf, "bob", orgB, "owner")).token;
      const p = await personWithRole(wharf, "pat", org, "viewer");
      puller = { ...p, registry: await wharf.registryToken(p.uid) };
      const r = await personWithRole(wharf, "scanner", org, "viewer");
      robot = { ...r, registry: await wharf.registryToken(r.uid) };
      subscription = await wharf.create(`/events/v2/subscriptions/${org}`, {
        sink: "http://127.0.0.1:9/hook",
      });
    });
    after(async () => {
      await wharf?.close();
    });

    it("creates, lists, gets, updates and deletes policies, validating each field", async () => {
      const created = await expectJson<ApiPolicy>(
        await createPolicy(org, {
          name: "baseline",
          mode: "WARN",
          requireSbom: true,
          exemptIdentities: [robot.uid],
        }),
      );
      assert.equal(created.mode, "WARN");
      assert.deepEqual(created.exemptIdentities, [robot.uid]);
      const got = await json<ApiPolicy>(`/registry/v2/policies/${created.uid}`);
      assert.equal(got.name, "baseline");
      const updated = await json<ApiPolicy>(`/registry/v2/policies/${created.uid}`, {
        method: "PATCH",
        body: { denySeverity: "CRITICAL", onlyFixable: true },
      });
      assert.equal(updated.denySeverity, "CRITICAL");
      assert.equal(updated.requireSbom, true, "fields outside the mask are kept");
      const listed = await json<{ policies: ApiPolicy[]; totalCount?: string }>(
        `/registry/v2/policies?uidp.descendants_of=${org}`,
      );
      assert.deepEqual(
        listed.policies.map((x) => x.uid),
        [created.uid],
      );
      await expectError(await createPolicy(org, { name: "baseline", mode: "WARN", requireSbom: true }), {
        status: 409,
        code: 6,
      });
      for (const [body, field] of [
        [{ name: "Bad Name", mode: "WARN", requireSbom: true }, "name"],
        [{ name: "nomode", requireSbom: true }, "mode"],
        [{ name: "norules", mode: "ENFORCE" }, "require_signature"],
        [{ name: "fixable", mode: "ENFORCE", onlyFixable: true, requireSbom: true }, "only_fixable"],
        [
          { name: "ghost", mode: "ENFORCE", requireSbom: true, exemptIdentities: ["f".repeat(40)] },
          "exempt_identities[0]",
        ],
      ] as const) {
        await expectError(await createPolicy(org, body), { status: 400, code: 3, field });
      }
      await expectError(await createPolicy("d".repeat(40), { name: "x", mode: "WARN", requireSbom: true }), {
        status: 404,
        code: 5,
      });
      // Another organization's owner neither sees nor changes acme's policies.
      await expectError(await wharf.api(`/registry/v2/policies/${created.uid}`, { token: ownerB }), {
        status: 403,
        code: 7,
      });
      await expectError(await createPolicy(org, { name: "evil", mode: "WARN", requireSbom: true }, ownerB), {
        status: 403,
        code: 7,
      });
      const theirs = await json<{ policies?: ApiPolicy[] }>(`/registry/v2/policies`, { token: ownerB });
      assert.deepEqual(theirs.policies ?? [], []);
      await json(`/registry/v2/policies/${created.uid}`, { method: "DELETE" });
      await expectError(await wharf.api(`/registry/v2/policies/${created.uid}`, { token: admin }), {
        status: 404,
        code: 5,
      });
    });

    it("requireSignature and requireSbom refuse until the image is signed and has an SBOM; referrers and .sig tags stay readable", async () => {
      const image = await pushImage(wharf, NAME, "v1", pushToken, "policies-v1");
      const repos = await json<{ repos: { uid: string }[] }>(
        `/registry/v2/repos?uidp.children_of=${prod}&name=api`,
      );
      repo = repos.repos[0]?.uid as string;
      await json(`/registry/v2/signingKeys/${prod}`, {
        method: "POST",
        body: { name: "release", publicKeyPem: key.publicKeyPem },
      });
      const policy = await expectJson<ApiPolicy>(
        await createPolicy(prod, {
          name: "prod-gate",
          mode: "ENFORCE",
          requireSignature: true,
          requireSbom: true,
        }),
      );
      await eventually(async () => (await pull("v1")).status === 403, "the policy to apply");
      const message = await expectDenied(
        await pull("v1"),
        /^denied by policy prod-gate \(acme\/prod\): not signed by a key trusted at acme\/prod/,
      );
      assert.match(message, /sign with one of release \(acme\/prod\)/);
      assert.match(message, /no SBOM attached/);
      assert.equal((await pull("v1", puller.registry, "HEAD")).status, 403);
      assert.equal((await pull(image.digest)).status, 403);
      const evaluated = await evaluate(image.digest, "v1");
      assert.equal(evaluated.allowed ?? false, false);
      assert.deepEqual(
        evaluated.violations?.map((v) => v.rule),
        ["requireSignature", "requireSbom"],
      );

      const signed = await signImage({
        registry: wharf,
        token: pushToken,
        repo: NAME,
        digest: image.digest,
        key,
        layout: "tag",
      });
      const sbom = await attachReferrer(wharf, NAME, pushToken, image.digest, SPDX, {
        artifactType: "application/spdx+json",
        layerMediaType: "application/spdx+json",
        subjectSize: image.manifest.length,
      });
      // The signature's tag, the SBOM referrer and the referrers API are never blocked.
      await expectServed(await pull(`sha256-${image.digest.slice(7)}.sig`));
      await expectServed(await pull(sbom));
      await expectServed(
        await wharf.registry(`/v2/${NAME}/referrers/${image.digest}`, { token: puller.registry }),
      );
      assert.ok(signed.referrer);
      await eventually(async () => (await pull("v1")).status === 200, "the signature and SBOM to count");
      assert.equal((await evaluate(image.digest, "v1")).allowed, true);
      // The administrator is never refused; the policy goes for the next tests.
      await json(`/registry/v2/policies/${policy.uid}`, { method: "DELETE" });
    });

    it("denySeverity refuses after a report adds a fixable HIGH, and a VEX statement lets it through again", async () => {
      const image = await pushImage(wharf, NAME, "v2", pushToken, "policies-v2");
      const policy = await expectJson<ApiPolicy>(
        await createPolicy(repo, {
          name: "no-high",
          mode: "ENFORCE",
          denySeverity: "HIGH",
          onlyFixable: true,
        }),
      );
      await eventually(
        async () => (await evaluate(image.digest)).violations === undefined,
        "the policy to load",
      );
      await expectServed(await pull("v2"));
      const uploaded = await fetch(
        `${wharf.apiUrl}/registry/v1/vuln_reports/${repo}?digest=${image.digest}`,
        {
          method: "POST",
          headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
          body: GRYPE,
        },
      );
      assert.equal(uploaded.status, 200, await uploaded.text());
      await eventually(async () => (await pull("v2")).status === 403, "the report to count");
      await expectDenied(
        await pull("v2"),
        /denied by policy no-high \(acme\/prod\/api\): CGA-2x3f-7c9q-m4hw HIGH fixable in libexampletls 3\.1\.3-r0 \(fixed in 3\.1\.4-r1\)/,
      );
      // The administrator pulls anyway.
      await expectServed(await pull("v2", pushToken));
      const vex = await fetch(`${wharf.apiUrl}/registry/v1/vex/${repo}?digest=${image.digest}`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: openVex(image.digest, "CGA-2x3f-7c9q-m4hw"),
      });
      assert.equal(vex.status, 200, await vex.text());
      await eventually(async () => (await pull("v2")).status === 200, "the VEX statement to suppress it");
      await json(`/registry/v2/policies/${policy.uid}`, { method: "DELETE" });
    });

    it("denyEol refuses once the tag's cycle passes its EOL date (controlled clock); exempt identities pull", async () => {
      const image = await pushImage(wharf, NAME, "3.8", pushToken, "policies-eol");
      await wharf.store.eol.putCycle({
        product: "python",
        cycle: "3.8",
        codename: "",
        eolDate: now + 60_000,
        eolUndated: false,
        lts: false,
        latestVersion: "3.8.20",
      });
      await wharf.store.eol.putRule({
        orgUid: org,
        repoName: "api",
        tagGlob: "3.*",
        product: "python",
        createTime: now,
      });
      const policy = await expectJson<ApiPolicy>(
        await createPolicy(org, {
          name: "eol",
          mode: "ENFORCE",
          denyEol: true,
          exemptIdentities: [robot.uid],
        }),
      );
      await eventually(
        async () => (await evaluate(image.digest, "3.8")).allowed === true,
        "the policy to load",
      );
      await expectServed(await pull("3.8"));
      now += 120_000; // past the EOL date (no grace) and the decision cache's lifetime
      await expectDenied(
        await pull("3.8"),
        /denied by policy eol \(acme\): end of life \(tag 3\.8: python 3\.8 ended/,
      );
      await expectDenied(await pull(image.digest), /end of life/);
      await expectServed(await pull("3.8", robot.registry));
      const evaluated = await evaluate(image.digest, "3.8");
      assert.equal(evaluated.allowed ?? false, false, ":evaluate ignores exemptions");
      assert.equal(evaluated.violations?.[0]?.rule, "denyEol");
      await json(`/registry/v2/policies/${policy.uid}`, { method: "DELETE" });
    });

    it("WARN serves with a Warning header; refusals and warnings are audited and emit coalesced events", async () => {
      const image = await pushImage(wharf, NAME, "v4", pushToken, "policies-v4");
      const warn = await expectJson<ApiPolicy>(
        await createPolicy(repo, { name: "sbom-soon", mode: "WARN", requireSbom: true }),
      );
      await eventually(
        async () => (await pull("v4")).headers.get("warning") !== null,
        "the WARN policy to load",
      );
      const res = await expectServed(await pull("v4"));
      assert.match(res.headers.get("warning") ?? "", /^299 - "sbom-soon: no SBOM attached/);
      assert.equal((await evaluate(image.digest)).allowed, true);
      assert.equal((await evaluate(image.digest)).warnings?.length, 1);
      const enforce = await expectJson<ApiPolicy>(
        await createPolicy(repo, { name: "must-sign", mode: "ENFORCE", requireSignature: true }),
      );
      await eventually(async () => (await pull("v4")).status === 403, "the ENFORCE policy to load");
      type Rec = { action: string; resource?: string; result: { code: string; reason?: string } };
      await eventually(async () => {
        const records =
          (await json<{ records?: Rec[] }>(`/audit/v2/records?uidp.descendants_of=${org}&page_size=500`))
            .records ?? [];
        const denied = records.some(
          (r) =>
            r.result.code === "DENIED" &&
            /ENFORCE policy must-sign \(acme\/prod\/api\): requireSignature/.test(r.result.reason ?? ""),
        );
        const warned = records.some(
          (r) =>
            r.result.code === "OK" &&
            r.resource === `${NAME}:v4` &&
            /WARN policy sbom-soon/.test(r.result.reason ?? ""),
        );
        return denied && warned;
      }, "the audit records");
      await eventually(async () => {
        const deliveries = await wharf.store.events.deliveries({
          subscriptionUid: subscription,
          limit: 1000,
        });
        const types = deliveries.map((d) => d.event.type);
        return (
          types.filter((t) => t === "dev.wharf.api.registry.policy.pull_denied.v1").length >= 1 &&
          types.includes("dev.wharf.api.registry.policy.pull_warned.v1") &&
          types.includes("dev.wharf.api.registry.policy.created.v1")
        );
      }, "the policy events");
      const denials = (
        await wharf.store.events.deliveries({ subscriptionUid: subscription, limit: 1000 })
      ).filter(
        (d) =>
          d.event.type === "dev.wharf.api.registry.policy.pull_denied.v1" && d.event.subject === enforce.uid,
      );
      assert.equal(denials.length, 1, "repeated refusals within a minute are one event");
      await json(`/registry/v2/policies/${warn.uid}`, { method: "DELETE" });
      await json(`/registry/v2/policies/${enforce.uid}`, { method: "DELETE" });
    });
  },
);
