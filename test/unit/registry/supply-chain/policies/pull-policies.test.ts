import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Principal } from "../../../../../src/core/context.js";
import {
  createPullPolicies,
  isReferrer,
  type PolicyEvent,
  warningValue,
} from "../../../../../src/registry/supply-chain/policies/pull-policies.js";
import type {
  ImageFinding,
  SignatureCheck,
  TrustedKey,
} from "../../../../../src/registry/supply-chain/supply-chain.js";
import type { ChangeBatch } from "../../../../../src/storage/change-feed.js";
import type { EolCycleRow, EolRepoRule } from "../../../../../src/storage/eol-store.js";
import type { PullPolicyRow } from "../../../../../src/storage/pull-policy-store.js";
import type { TagRow } from "../../../../../src/storage/registry-store.js";

const ORG = "a".repeat(40);
const FOLDER = `${ORG}/${"1".repeat(16)}`;
const REPO = `${FOLDER}/${"2".repeat(16)}`;
const OTHER_REPO = `${ORG}/${"3".repeat(16)}`;
const REPOSITORY = "acme/prod/api";
const d = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const IMAGE = d(1);
const INDEX = d(2);
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const MANIFEST = Buffer.from('{"schemaVersion":2,"layers":[]}');
const someone: Principal = { identityUid: "b".repeat(40), isAdmin: false, claims: {} };

function policy(parentUid: string, name: string, fields: Partial<PullPolicyRow>): PullPolicyRow {
  return {
    uid: `${parentUid}/${name
      .padEnd(16, "0")
      .slice(0, 16)
      .replace(/[^0-9a-f]/g, "0")}`,
    parentUid,
    name,
    mode: "ENFORCE",
    requireSignature: false,
    denySeverity: "",
    onlyFixable: false,
    denyEol: false,
    requireSbom: false,
    exemptIdentities: [],
    createTime: T0,
    updateTime: T0,
    ...fields,
  };
}

/** A world of stand-in facts the evaluator reads, with counters of each provider's calls. */
function world() {
  const w = {
    now: T0,
    policies: [] as PullPolicyRow[],
    signatures: new Map<string, SignatureCheck[]>(),
    keys: [] as TrustedKey[],
    findings: new Map<string, ImageFinding[]>(),
    sboms: new Set<string>(),
    indexes: new Map<string, string[]>(),
    tags: [] as TagRow[],
    eolRules: [] as EolRepoRule[],
    cycles: [] as EolCycleRow[],
    calls: { policies: 0, signatures: 0, findings: 0, sboms: 0 },
    listeners: [] as ((batch: ChangeBatch) => void)[],
    events: [] as PolicyEvent[],
  };
  const store = {
    pullPolicies: {
      all: async () => {
        w.calls.policies++;
        return w.policies.map((p) => ({ ...p }));
      },
    },
    changes: {
      subscribe(listener: (batch: ChangeBatch) => void) {
        w.listeners.push(listener);
        return () => {};
      },
    },
    tags: {
      getByName: async (repoUid: string, name: string) =>
        w.tags.find((t) => t.repoUid === repoUid && t.name === name),
      ofDigest: async (repoUid: string, digest: string) =>
        w.tags.filter((t) => t.repoUid === repoUid && t.digest === digest),
    },
    manifests: { indexesOf: async (_repoUid: string, digest: string) => w.indexes.get(digest) ?? [] },
    eol: {
      rulesForRepos: async () => w.eolRules,
      cycles: async (products: readonly string[]) => w.cycles.filter((c) => products.includes(c.product)),
    },
  };
  const evaluator = createPullPolicies({
    store: store as never,
    clock: { now: () => w.now },
    keyring: { keysFor: async () => w.keys },
    signatures: {
      signatures: async (_repo, digest) => {
        w.calls.signatures++;
        return w.signatures.get(digest) ?? [];
      },
    },
    vulnerabilities: {
      unsuppressedFindings: async (_repo, digest) => {
        w.calls.findings++;
        return w.findings.get(digest);
      },
    },
    sboms: {
      hasSbom: async (_repo, digest) => {
        w.calls.sboms++;
        return w.sboms.has(digest);
      },
      sbom: async () => undefined,
    },
    eolGraceMonths: 6,
    recordEvent: (event) => w.events.push(event),
  });
  const feed = (...tables: string[]) => {
    for (const l of w.listeners) l({ tables, everything: false });
  };
  return { w, evaluator, feed };
}

const verified = (digest: string): SignatureCheck => ({
  referrer: digest,
  layout: "cosign-referrer",
  keyUid: `${ORG}/${"4".repeat(16)}`,
  keyName: "ci",
  verified: true,
  reason: "verified by key ci trusted at acme",
});
const critical: ImageFinding = {
  vulnerabilityId: "CVE-2026-1",
  severity: "CRITICAL",
  fixable: true,
  packageName: "openssl",
  packageVersion: "3.0.7",
  fixedVersion: "3.0.8",
};
const image = (tag?: string) => ({
  repoUid: REPO,
  repository: REPOSITORY,
  digest: IMAGE,
  ...(tag ? { tag } : {}),
});
const pull = (tag?: string, principal: Principal | undefined = someone, content: Uint8Array = MANIFEST) => ({
  ...image(tag),
  content,
  principal,
});

describe("pull policies: the evaluator", () => {
  it("allows everything and reads nothing when no policy applies", async () => {
    const { w, evaluator } = world();
    w.policies = [policy(OTHER_REPO, "elsewhere", { requireSignature: true })];
    assert.deepEqual(await evaluator.evaluate(image()), { allowed: true, violations: [], warnings: [] });
    assert.equal(await evaluator.checkPull(pull("v1")), undefined);
    assert.equal(w.calls.signatures + w.calls.findings + w.calls.sboms, 0);
  });

  it("requireSignature: refused with the trusted keys named until a verified signature exists", async () => {
    const { w, evaluator, feed } = world();
    w.policies = [policy(FOLDER, "prod", { requireSignature: true })];
    w.keys = [
      {
        uid: `${FOLDER}/k`,
        name: "release",
        parentUid: FOLDER,
        parentPath: "acme/prod",
        publicKeyPem: "",
        createTime: T0,
      },
    ];
    w.signatures.set(IMAGE, [
      {
        ...verified(d(9)),
        verified: false,
        keyUid: "",
        keyName: "",
        reason: "payload names sha256:… not this image",
      },
    ]);
    const verdict = await evaluator.checkPull(pull("v1"));
    assert.equal(verdict?.allowed, false);
    assert.match(
      verdict?.deniedMessage ?? "",
      /^denied by policy prod \(acme\/prod\): not signed by a key trusted at acme\/prod/,
    );
    assert.match(
      verdict?.deniedMessage ?? "",
      /sign with one of release \(acme\/prod\), e\.g\. cosign sign --key/,
    );
    assert.match(verdict?.deniedMessage ?? "", /payload names/);
    assert.equal(verdict?.violations[0]?.rule, "requireSignature");
    // A keyless bundle verified against the trusted root names no key: it is not a trusted key's.
    w.signatures.set(IMAGE, [
      { ...verified(d(9)), layout: "sigstore-bundle", keyUid: "", keyName: "", reason: "keyless" },
    ]);
    feed("manifests");
    assert.equal((await evaluator.checkPull(pull("v1")))?.allowed, false, "keyless does not count");
    w.signatures.set(IMAGE, [verified(d(9))]);
    feed("manifests");
    assert.equal((await evaluator.checkPull(pull("v1")))?.allowed ?? true, true);
  });

  it("denySeverity: unsuppressed findings at or above the floor; onlyFixable; no report is no violation", async () => {
    const { w, evaluator, feed } = world();
    w.policies = [policy(ORG, "sev", { denySeverity: "HIGH", onlyFixable: true })];
    assert.equal((await evaluator.evaluate(image())).allowed, true, "no report at all");
    w.findings.set(IMAGE, [
      { ...critical, fixable: false },
      { ...critical, vulnerabilityId: "CVE-2026-2", severity: "MEDIUM" },
    ]);
    feed("vuln_reports");
    assert.equal((await evaluator.evaluate(image())).allowed, true, "unfixable CRITICAL, fixable MEDIUM");
    w.findings.set(IMAGE, [critical]);
    feed("vex_statements");
    const decision = await evaluator.evaluate(image());
    assert.equal(decision.allowed, false);
    assert.deepEqual(
      decision.violations.map((v) => [v.rule, v.detail.split(" (update")[0]]),
      [["denySeverity", "CVE-2026-1 CRITICAL fixable in openssl 3.0.7 (fixed in 3.0.8)"]],
    );
    w.findings.set(IMAGE, []);
    feed("vex_statements");
    assert.equal((await evaluator.evaluate(image())).allowed, true, "suppressed by VEX");
  });

  it("requireSbom and index children: a platform manifest passes by its index's SBOM, signature and report", async () => {
    const { w, evaluator } = world();
    w.policies = [
      policy(REPO, "all", { requireSbom: true, requireSignature: true, denySeverity: "CRITICAL" }),
    ];
    w.findings.set(INDEX, [critical]);
    const refused = await evaluator.evaluate(image());
    assert.deepEqual(
      refused.violations.map((v) => v.rule),
      ["requireSignature", "requireSbom"],
    );
    assert.match(refused.violations[1]?.detail ?? "", /^no SBOM attached/);
    const { w: w2, evaluator: e2 } = world();
    w2.policies = w.policies;
    w2.indexes.set(IMAGE, [INDEX]);
    w2.sboms.add(INDEX);
    w2.signatures.set(INDEX, [verified(d(8))]);
    w2.findings.set(INDEX, [critical]);
    const child = await e2.evaluate(image());
    assert.deepEqual(
      child.violations.map((v) => v.rule),
      ["denySeverity"],
      "the index's report stands in too",
    );
  });

  it("denyEol: INACTIVE past the EOL date and grace, by tag or by any tag naming the digest; the clock moves decisions", async () => {
    const { w, evaluator } = world();
    w.policies = [policy(ORG, "eol", { denyEol: true })];
    const tag = (name: string, digest: string): TagRow => ({
      uid: `${REPO}/${name.padStart(16, "0")}`,
      repoUid: REPO,
      name,
      digest,
      deprecated: false,
      createTime: T0,
      updateTime: T0,
    });
    w.tags = [tag("3.8", IMAGE), tag("latest", IMAGE)];
    w.eolRules = [
      { orgUid: ORG, repoName: "api", tagGlob: "3.*", product: "python", createTime: T0, repoUid: REPO },
    ];
    w.cycles = [
      {
        product: "python",
        cycle: "3.8",
        codename: "",
        eolDate: T0 + 10 * DAY,
        eolUndated: false,
        lts: false,
        latestVersion: "3.8.20",
      },
    ];
    const graceEnd = Date.UTC(2026, 6, 11); // the EOL date plus 6 months of grace
    w.now = graceEnd - 1_000;
    assert.equal((await evaluator.evaluate(image("3.8"))).allowed, true, "in grace");
    w.now = graceEnd + 1_000;
    assert.equal((await evaluator.evaluate(image("3.8"))).allowed, true, "cached decision within its TTL");
    w.now += 5_000;
    const byTag = await evaluator.evaluate(image("3.8"));
    assert.equal(byTag.allowed, false);
    assert.match(
      byTag.violations[0]?.detail ?? "",
      /end of life \(tag 3\.8: python 3\.8 ended 2026-01-11, grace ended 2026-07-11/,
    );
    assert.equal((await evaluator.evaluate(image("latest"))).allowed, true, "latest follows no cycle");
    assert.equal((await evaluator.evaluate(image())).allowed, false, "by digest: 3.8 names it");
  });

  it("WARN serves with one Warning value per policy; ENFORCE and WARN together; exemptions and the administrator", async () => {
    const { w, evaluator } = world();
    const exempt: Principal = { identityUid: "c".repeat(40), isAdmin: false, claims: {} };
    w.policies = [
      policy(ORG, "warn-sbom", { mode: "WARN", requireSbom: true }),
      policy(REPO, "enforce-sig", { requireSignature: true, exemptIdentities: [exempt.identityUid] }),
    ];
    const both = await evaluator.checkPull(pull("v1"));
    assert.equal(both?.allowed, false);
    assert.deepEqual(
      both?.violations.map((v) => v.policy),
      ["enforce-sig", "warn-sbom"],
      "nearest policy first",
    );
    assert.match(both?.deniedMessage ?? "", /^denied by policy enforce-sig \(acme\/prod\/api\)/);
    assert.doesNotMatch(both?.deniedMessage ?? "", /warn-sbom/);
    const warned = await evaluator.checkPull(pull("v1", exempt));
    assert.equal(warned?.allowed, true);
    assert.equal(warned?.warnings.length, 1);
    assert.match(warned?.warnings[0] ?? "", /^299 - "warn-sbom: no SBOM attached/);
    assert.match(warned?.auditReason ?? "", /^WARN policy warn-sbom \(acme\): requireSbom$/);
    assert.equal(await evaluator.checkPull(pull("v1", { ...someone, isAdmin: true })), undefined);
    // :evaluate ignores exemptions.
    assert.equal((await evaluator.evaluate(image())).allowed, false);
  });

  it("never acts on referrers or cosign's .sig/.att/.sbom tags", async () => {
    const { w, evaluator } = world();
    w.policies = [policy(ORG, "sig", { requireSignature: true })];
    const referrer = Buffer.from(JSON.stringify({ schemaVersion: 2, subject: { digest: IMAGE, size: 2 } }));
    assert.equal(await evaluator.checkPull(pull(undefined, someone, referrer)), undefined);
    for (const suffix of ["sig", "att", "sbom"]) {
      assert.equal(await evaluator.checkPull(pull(`sha256-${"e".repeat(64)}.${suffix}`)), undefined);
    }
    assert.equal((await evaluator.checkPull(pull("sha256-abc.sig")))?.allowed, false, "not cosign's layout");
    assert.equal(isReferrer(Buffer.from('{"annotations":{"x":"\\"subject\\""}}')), false);
    assert.equal(isReferrer(Buffer.from('{"subject":null}')), false);
  });

  it("caches decisions until a supply-chain table changes, and follows policy changes through the feed", async () => {
    const { w, evaluator, feed } = world();
    w.policies = [policy(ORG, "sig", { requireSignature: true })];
    await evaluator.evaluate(image());
    await evaluator.evaluate(image());
    assert.equal(w.calls.signatures, 1, "second evaluation from the cache");
    assert.equal(w.calls.policies, 1);
    feed("pull_policies_unrelated", "audit_log");
    await evaluator.evaluate(image());
    assert.equal(w.calls.signatures, 1, "an unrelated batch keeps it");
    feed("trusted_keys");
    await evaluator.evaluate(image());
    assert.equal(w.calls.signatures, 2, "a key change drops it");
    w.policies = [];
    feed("pull_policies");
    assert.equal((await evaluator.evaluate(image())).allowed, true, "policy deleted");
    assert.equal(w.calls.policies, 2);
  });

  it("coalesces events: one per (policy, digest, outcome) per minute", async () => {
    const { w, evaluator } = world();
    w.policies = [
      policy(ORG, "sig", { requireSignature: true }),
      policy(ORG, "sbom", { mode: "WARN", requireSbom: true }),
    ];
    for (let i = 0; i < 5; i++) await evaluator.checkPull(pull("v1"));
    assert.deepEqual(w.events.map((e) => [e.verb, e.policy.name]).sort(), [
      ["pull_denied", "sig"],
      ["pull_warned", "sbom"],
    ]);
    assert.equal(w.events[0]?.violations.length, 1);
    w.now += 61_000;
    await evaluator.checkPull(pull("v1"));
    assert.equal(w.events.length, 4);
  });

  it("escapes the Warning header's quoted string and keeps it ASCII", () => {
    const value = warningValue("p", [
      {
        policyUid: "u",
        policy: "p",
        policyPath: "acme",
        mode: "WARN",
        rule: "requireSbom",
        detail: 'a "quoted" \\ café',
      },
    ]);
    assert.equal(value, '299 - "p: a \\"quoted\\" \\\\ caf?"');
  });
});
