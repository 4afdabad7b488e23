import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import type { Clock } from "../../src/core/clock.js";
import { newRootUid } from "../../src/core/uidp.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { personWithRole, type RegisteredPerson } from "../support/registered-person.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const DAY_MS = 86_400_000;
const GRYPE = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url), "utf8");
/** The Grype fixture (1 critical, 1 high, 1 medium, 1 negligible) without its CRITICAL match. */
const GRYPE_WITHOUT_CRITICAL = (() => {
  const doc = JSON.parse(GRYPE) as { matches: { vulnerability: { id: string } }[] };
  doc.matches = doc.matches.filter((m) => m.vulnerability.id !== "CVE-2026-10003");
  return JSON.stringify(doc);
})();
/** The fixture VEX document (suppresses the critical CVE-2026-10003 and the high CGA-…) about `digest`. */
const vexAbout = (digest: string) =>
  readFileSync(new URL("../fixtures/vex/openvex-not-affected.json", import.meta.url), "utf8").replaceAll(
    "a".repeat(64),
    digest.slice("sha256:".length),
  );

interface InsightsJson {
  pushesPerDay: { day: string; count?: string }[];
  mostVulnerableTags?: {
    repoUid: string;
    repo: string;
    tag: string;
    digest: string;
    critical?: string;
    high?: string;
    medium?: string;
    low?: string;
  }[];
  vulnerabilitiesOmitted?: boolean;
}

// GetInsights (ADR 0064, docs/api.md "Insights"): pushes per day from tag history with an injected
// clock, the most vulnerable tags with VEX applied, and who may ask; on both engines.
forEachEngine("registry insights API", (db) => {
  let wharf: TestServer;
  let offset = 0;
  const clock: Clock = { now: () => Date.now() + offset };
  let admin: string;
  let registryToken: string;
  let acme: string;
  let globex: string;
  let puller: RegisteredPerson;
  let globexOwner: RegisteredPerson;
  const images = new Map<string, BuiltImage>();
  const today = () => Math.floor(clock.now() / DAY_MS);

  const push = async (name: string, tag: string, seed: string) => {
    const image = await pushImage(wharf, name, tag, registryToken, buildImage(seed));
    images.set(`${name}:${tag}`, image);
    images.set(seed, image);
  };
  const repoUid = async (name: string, parent: string) => {
    const { repos } = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${parent}&name=${name}`, { token: admin }),
    );
    assert.ok(repos[0], `repo ${name}`);
    return repos[0].uid;
  };
  const upload = async (path: string, repo: string, digest: string, body: string) => {
    const res = await fetch(`${wharf.apiUrl}${path}/${repo}?digest=${digest}`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body,
    });
    assert.equal(res.status, 200, await res.text());
  };
  /** Moves the clock to `days` from now and mints the tokens anew (a token lives at most a day). */
  const at = async (days: number) => {
    offset = days * DAY_MS;
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID);
    registryToken = await wharf.registryToken();
  };
  const insights = (group: string, token?: string) =>
    wharf.api(`/registry/v2/insights/${group}`, token === undefined ? {} : { token });

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({ ...(databaseUrl ? { databaseUrl } : {}), clock });
    await at(-31);
    acme = await wharf.create("/iam/v2/groups", { name: "acme" }, admin);
    globex = await wharf.create("/iam/v2/groups", { name: "globex" }, admin);
    const team = await wharf.create(`/iam/v2/groups/${acme}`, { name: "team" }, admin);
    assert.ok(team.startsWith(`${acme}/`));
    puller = await personWithRole(wharf, "puller", acme, "registry.pull", { bindingToken: admin });
    globexOwner = await personWithRole(wharf, "globex-owner", globex, "owner", { bindingToken: admin });

    // 31 days ago: outside the 30-day window.
    await push("acme/app", "a", "old");
    await at(-3);
    await push("acme/app", "a", "a1");
    await push("globex/app", "a", "globex");
    await at(-1);
    await push("acme/app", "a", "a2");
    await push("acme/lib", "b", "b1");
    await push("acme/team/svc", "x", "x1");
    await push("acme/app", "a", "a2"); // the same image again: no tag move, not a push
    await at(0);
    await push("acme/app", "c", "c1");
    puller.token = await wharf.tokenFor(puller.uid);
    globexOwner.token = await wharf.tokenFor(globexOwner.uid);
  });
  after(async () => {
    await wharf?.close();
  });

  it("counts pushes (tag moves) per UTC day over the last 30 days, folders included, other orgs not", async () => {
    const body = await expectJson<InsightsJson>(await insights(acme, admin));
    assert.equal(body.pushesPerDay.length, 30);
    const day = (n: number) => new Date((today() - n) * DAY_MS).toISOString().slice(0, 10);
    assert.equal(body.pushesPerDay[29]?.day, day(0), "the last entry is today");
    assert.equal(body.pushesPerDay[0]?.day, day(29));
    const counts = Object.fromEntries(body.pushesPerDay.map((d) => [d.day, Number(d.count ?? 0)]));
    assert.deepEqual(
      Object.entries(counts).filter(([, n]) => n > 0),
      [
        [day(3), 1],
        [day(1), 3],
        [day(0), 1],
      ],
    );

    const folder = await expectJson<InsightsJson>(
      await insights((await repoUid("svc", acme)).split("/").slice(0, -1).join("/"), admin),
    );
    assert.equal(
      folder.pushesPerDay.reduce((n, d) => n + Number(d.count ?? 0), 0),
      1,
      "the folder's own repos only",
    );
  });

  it("ranks tags by unsuppressed matches of their current image's newest report; suppressed ones are not counted", async () => {
    const app = await repoUid("app", acme);
    const svc = await repoUid("svc", acme);
    const digestOf = (ref: string) => images.get(ref)?.digest as string;
    await upload("/registry/v1/vuln_reports", app, digestOf("acme/app:a"), GRYPE);
    // The tag's previous image: its report does not count for any tag.
    await upload("/registry/v1/vuln_reports", app, digestOf("a1"), GRYPE);
    await upload("/registry/v1/vuln_reports", svc, digestOf("acme/team/svc:x"), GRYPE);
    // Its newest report drops the critical match: the older one no longer counts.
    await upload("/registry/v1/vuln_reports", svc, digestOf("acme/team/svc:x"), GRYPE_WITHOUT_CRITICAL);
    await upload("/registry/v1/vuln_reports", app, digestOf("acme/app:c"), GRYPE);
    // VEX suppresses c's critical and high matches: a medium one is left.
    await upload("/registry/v1/vex", app, digestOf("acme/app:c"), vexAbout(digestOf("acme/app:c")));

    const body = await expectJson<InsightsJson>(await insights(acme, admin));
    assert.equal(body.vulnerabilitiesOmitted ?? false, false);
    const rows = (body.mostVulnerableTags ?? []).map((t) => [
      t.repo,
      t.tag,
      Number(t.critical ?? 0),
      Number(t.high ?? 0),
      Number(t.medium ?? 0),
      Number(t.low ?? 0),
    ]);
    assert.deepEqual(rows, [
      ["acme/app", "a", 1, 1, 1, 0],
      ["acme/team/svc", "x", 0, 1, 1, 0],
      ["acme/app", "c", 0, 0, 1, 0],
    ]);
    assert.equal(body.mostVulnerableTags?.[0]?.digest, digestOf("acme/app:a"));
    assert.equal(body.mostVulnerableTags?.[0]?.repoUid, app);
  });

  it("leaves the vulnerabilities out for a caller without vuln_report.list, and still counts pushes", async () => {
    const body = await expectJson<InsightsJson>(await insights(acme, puller.token));
    assert.equal(body.vulnerabilitiesOmitted, true);
    assert.deepEqual(body.mostVulnerableTags ?? [], []);
    assert.equal(
      body.pushesPerDay.reduce((n, d) => n + Number(d.count ?? 0), 0),
      5,
    );
  });

  it("refuses another organization's owner, an anonymous caller, a malformed uid, and answers NOT_FOUND for an unknown group", async () => {
    await expectError(await insights(acme, globexOwner.token), { status: 403, code: 7 });
    const own = await expectJson<InsightsJson>(await insights(globex, globexOwner.token));
    assert.equal(
      own.pushesPerDay.reduce((n, d) => n + Number(d.count ?? 0), 0),
      1,
    );
    await expectError(await insights(acme), { status: 401, code: 16 });
    await expectError(await insights("not-a-uid", admin), { status: 400, code: 3, field: "group_uid" });
    await expectError(await insights(newRootUid(), admin), { status: 404, code: 5 });
  });
});
