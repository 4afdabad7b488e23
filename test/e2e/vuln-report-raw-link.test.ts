import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { RAW_REPORT_DOWNLOAD_PATH, RAW_REPORT_LINK_TTL_MS } from "../../src/vulnreports/raw-report-link.js";
import { RAW_INLINE_LIMIT } from "../../src/vulnreports/vulnerabilities-service.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { registeredPerson } from "../support/registered-person.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

interface RawAnswer {
  digest?: string;
  rawReport?: string;
  rawReportUrl?: string;
}

// Storage cannot differ here (the bytes are a blob, the link a signature): SQLite only.
describe("raw vulnerability reports too large to inline", () => {
  let wharf: TestServer;
  let now = Date.now();
  const clock = { now: () => now };
  let rawPath: string;
  let report: Buffer;

  before(async () => {
    wharf = await startTestServer({ clock });
    await wharf.create("/iam/v2/groups", { name: "big" });
    const image = await pushImage(wharf, "big/app", "latest", await wharf.registryToken(), buildImage("big"));
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api("/registry/v2/repos?name=app", { token: wharf.adminToken }),
    );
    const repo = repos.repos[0]?.uid as string;
    // A Grype report just over the inline limit (its bulk in one field, as large descriptors are).
    report = Buffer.from(
      JSON.stringify({
        matches: [],
        descriptor: { name: "grype", padding: "x".repeat(RAW_INLINE_LIMIT + 1024) },
      }),
    );
    await expectJson(
      await fetch(`${wharf.apiUrl}/registry/v1/vuln_reports/${repo}?digest=${image.digest}`, {
        method: "POST",
        headers: { authorization: `Bearer ${wharf.adminToken}` },
        body: report,
      }),
    );
    const listed = await expectJson<{ items: { scanner: { name: string }; createdAt: string }[] }>(
      await wharf.api(`/registry/v1/vuln_reports?digest=${image.digest}`, { token: wharf.adminToken }),
    );
    const [one] = listed.items;
    assert.ok(one, "the report is listed");
    rawPath = `/registry/v1/vuln_reports/raw?digest=${image.digest}&scanner=${one.scanner.name}&createdAt=${one.createdAt}`;
  });
  after(async () => {
    await wharf?.close();
  });

  it("answers an expiring rawReportUrl that any HTTP client fetches the exact bytes from, no token needed", async () => {
    const answer = await expectJson<RawAnswer>(await wharf.api(rawPath, { token: wharf.adminToken }));
    assert.equal(answer.rawReport ?? "", "", "not inlined");
    const url = new URL(answer.rawReportUrl ?? "");
    assert.equal(url.origin, new URL(wharf.apiUrl).origin);
    assert.equal(url.pathname, RAW_REPORT_DOWNLOAD_PATH);
    const download = await fetch(url);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get("content-type"), "application/json");
    assert.equal(download.headers.get("content-length"), String(report.length));
    assert.equal(download.headers.get("cache-control"), "no-store");
    assert.equal(sha256(new Uint8Array(await download.arrayBuffer())), sha256(report));
  });

  it("refuses a tampered, missing or expired link with UNAUTHENTICATED, and names what to do", async () => {
    const answer = await expectJson<RawAnswer>(await wharf.api(rawPath, { token: wharf.adminToken }));
    const url = new URL(answer.rawReportUrl ?? "");
    const token = url.searchParams.get("token") ?? "";
    const [header, payload, mac] = token.split(".");
    const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8"));
    const otherDigest = `sha256:${"0".repeat(64)}`;
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: otherDigest })).toString("base64url");
    for (const bad of [`${header}.${forged}.${mac}`, "", "not-a-token"]) {
      const refused = await fetch(
        `${wharf.apiUrl}${RAW_REPORT_DOWNLOAD_PATH}?token=${encodeURIComponent(bad)}`,
      );
      const status = await expectError(refused, { status: 401, code: 16 });
      assert.match(String(status.message), /invalid or has expired.*GetRawVulnReport/);
    }
    now += RAW_REPORT_LINK_TTL_MS + 1000;
    await expectError(await fetch(url), { status: 401, code: 16 });
    // A new answer links again.
    const again = await expectJson<RawAnswer>(await wharf.api(rawPath, { token: wharf.adminToken }));
    assert.equal((await fetch(again.rawReportUrl ?? "")).status, 200);
  });

  it("gives no link to a caller who may not read the report", async () => {
    const outsider = (await registeredPerson(wharf, "raw-outsider")).token;
    assert.deepEqual(await expectJson(await wharf.api(rawPath, { token: outsider })), {});
  });
});
