import type { Clock } from "../../../core/clock.js";
import type { Principal } from "../../../core/context.js";
import { selfAndAncestors } from "../../../core/uidp.js";
import { touches } from "../../../storage/change-feed.js";
import type { PullPolicyMode, PullPolicyRow } from "../../../storage/pull-policy-store.js";
import type { Store } from "../../../storage/store.js";
import { SUPPLY_CHAIN_TABLES } from "../supply-chain.js";
import { type FactSources, gatherFacts, type ImageRef } from "./image-facts.js";
import { factsNeeded, type ImageFacts, type PolicyRule, violationsOf } from "./policy-rules.js";

/** One failed rule of one policy, as evaluations and events report it. */
export interface PolicyViolation {
  policyUid: string;
  /** The policy's name. */
  policy: string;
  /** The registry path of the policy's parent (`acme/prod`). */
  policyPath: string;
  mode: PullPolicyMode;
  rule: PolicyRule;
  detail: string;
}

/** What the policies of a repo say about one image. */
export interface PolicyDecision {
  /** False when an ENFORCE policy has a violation. */
  allowed: boolean;
  /** Every failed rule of every applicable policy, nearest policy first. */
  violations: PolicyViolation[];
  /** The `Warning` header values a pull is served with: one per WARN policy with violations. */
  warnings: string[];
}

/** A pull the policies refuse or warn about: what the registry edge answers. */
export interface PullVerdict extends PolicyDecision {
  /** The 403 message when refused: each ENFORCE policy and its failed rules. */
  deniedMessage?: string;
  /** For the audit record: `policy <name> (<path>): <rules>` of each policy that acted. */
  auditReason: string;
}

/** What a registry pull tells the policies. */
export interface PullRequest extends ImageRef {
  /** The manifest's bytes: a manifest with a `subject` (any referrer) is never refused. */
  content: Uint8Array;
  principal: Principal | undefined;
}

/** Pull policies (ADR 0058): evaluation for `:evaluate`, and the check of every manifest GET/HEAD. */
export interface PullPolicies {
  /** The policies at `repoUid` and its ancestors, nearest parent first, then oldest. */
  policiesFor(repoUid: string): Promise<readonly PullPolicyRow[]>;
  /** What a pull of `image` by a caller the policies apply to gets now (no exemption applied). */
  evaluate(image: ImageRef): Promise<PolicyDecision>;
  /**
   * The verdict on a pull, or undefined when nothing acts on it: no policy applies, the caller is
   * the platform administrator or exempt from each policy with violations, the manifest is a
   * referrer (has a `subject`) or the tag is cosign's `sha256-<hex>.sig|.att|.sbom`. Records the
   * `policy.pull_denied` / `policy.pull_warned` events (coalesced: one per policy, digest and
   * outcome per minute).
   */
  checkPull(request: PullRequest): Promise<PullVerdict | undefined>;
}

/** The evaluator as the composition root holds it: `close` stops following the change feed. */
export interface PullPoliciesHandle extends PullPolicies {
  close(): void;
}

/** A policy event to record (the composition root writes it to the outbox in its own transaction). */
export interface PolicyEvent {
  verb: "pull_denied" | "pull_warned";
  policy: PullPolicyRow;
  image: ImageRef;
  violations: PolicyViolation[];
  principal: Principal | undefined;
}

export interface PullPoliciesDeps extends FactSources {
  store: FactSources["store"] & Pick<Store, "pullPolicies" | "changes">;
  clock: Clock;
  /** Records one decision event; must not reject (errors are its own to report). */
  recordEvent?: (event: PolicyEvent) => void;
  /** How long a decision is kept at most (EOL dates passing; a lost change notification). Default 5 s. */
  decisionTtlMs?: number;
  /** How long the policy table is kept at most without a change notification. Default 30 s. */
  policiesTtlMs?: number;
  /** Most decisions kept (the oldest go first). Default 10,000. */
  maxDecisions?: number;
}

const DEFAULT_DECISION_TTL_MS = 5_000;
const DEFAULT_POLICIES_TTL_MS = 30_000;
const DEFAULT_MAX_DECISIONS = 10_000;
/** One event per (policy, digest, outcome) per this long. */
const EVENT_COALESCE_MS = 60_000;
/** cosign's tag layout for signatures, attestations and SBOMs of `sha256:<hex>`. */
const COSIGN_TAG = /^sha256-[0-9a-f]{64}\.(?:sig|att|sbom)$/;
/** `"subject"` as bytes: a manifest without it cannot be a referrer, and is not parsed. */
const SUBJECT_KEY = Buffer.from('"subject"');

interface PolicySnapshot {
  byParent: Map<string, PullPolicyRow[]>;
  /** Memo of policiesFor by repo uid. */
  byRepo: Map<string, PullPolicyRow[]>;
  expires: number;
}

/** Per-policy violations of one image, before exemptions. */
interface CachedDecision {
  policies: readonly PullPolicyRow[];
  violations: Map<string, PolicyViolation[]>;
  expires: number;
}

const NO_POLICIES: readonly PullPolicyRow[] = [];

/**
 * Creates the evaluator. It holds the whole `pull_policies` table in memory (a few rows per
 * organization) and follows the store's change feed, so a pull in a repo without policies costs a
 * map read. Decisions are cached per (repo, digest, tag) and dropped when a change-feed batch
 * touches a supply-chain table (SUPPLY_CHAIN_TABLES: a key, report, VEX statement, signature,
 * SBOM, EOL datum or policy changed, here or on another replica) and after `decisionTtlMs` on the
 * injected clock in any case (an EOL date passing).
 */
export function createPullPolicies(deps: PullPoliciesDeps): PullPoliciesHandle {
  const { store, clock } = deps;
  const decisionTtl = deps.decisionTtlMs ?? DEFAULT_DECISION_TTL_MS;
  const policiesTtl = deps.policiesTtlMs ?? DEFAULT_POLICIES_TTL_MS;
  const maxDecisions = deps.maxDecisions ?? DEFAULT_MAX_DECISIONS;
  let snapshot: Promise<PolicySnapshot> | undefined;
  let policyGeneration = 0;
  let factGeneration = 0;
  const decisions = new Map<string, Promise<CachedDecision>>();
  // The settled snapshot and decisions, read without awaiting on the pull path (a hit costs no microtask).
  let ready: PolicySnapshot | undefined;
  const settled = new Map<string, CachedDecision>();
  const emitted = new Map<string, number>();

  const unsubscribe = store.changes.subscribe((batch) => {
    if (touches(batch, ["pull_policies", "groups", "repos"])) {
      policyGeneration++;
      snapshot = undefined;
      ready = undefined;
    }
    if (touches(batch, SUPPLY_CHAIN_TABLES)) {
      factGeneration++;
      decisions.clear();
      settled.clear();
    }
  });

  async function loadPolicies(): Promise<PolicySnapshot> {
    const started = policyGeneration;
    const rows = await store.pullPolicies.all();
    const byParent = new Map<string, PullPolicyRow[]>();
    for (const row of rows.sort((a, b) => a.createTime - b.createTime || (a.uid < b.uid ? -1 : 1))) {
      const list = byParent.get(row.parentUid) ?? [];
      list.push(row);
      byParent.set(row.parentUid, list);
    }
    return {
      byParent,
      byRepo: new Map(),
      expires: started === policyGeneration ? clock.now() + policiesTtl : 0,
    };
  }

  async function policies(): Promise<PolicySnapshot> {
    const held = snapshot;
    if (held) {
      const s = await held;
      if (s.expires > clock.now()) return s;
      if (snapshot === held) snapshot = undefined;
    }
    const loading = loadPolicies();
    snapshot = loading;
    loading.then(
      (s) => {
        if (snapshot === loading) ready = s;
      },
      () => {},
    );
    loading.catch(() => {
      if (snapshot === loading) snapshot = undefined;
    });
    return loading;
  }

  /** policiesFor from the settled snapshot, or undefined when it must be (re)loaded. */
  function readyPoliciesFor(repoUid: string): readonly PullPolicyRow[] | undefined {
    const s = ready;
    if (s === undefined || s.expires <= clock.now()) return undefined;
    return applicableIn(s, repoUid);
  }

  async function policiesFor(repoUid: string): Promise<readonly PullPolicyRow[]> {
    return readyPoliciesFor(repoUid) ?? applicableIn(await policies(), repoUid);
  }

  function applicableIn(s: PolicySnapshot, repoUid: string): readonly PullPolicyRow[] {
    if (s.byParent.size === 0) return NO_POLICIES;
    let found = s.byRepo.get(repoUid);
    if (found === undefined) {
      found = selfAndAncestors(repoUid)
        .reverse()
        .flatMap((uid) => s.byParent.get(uid) ?? []);
      s.byRepo.set(repoUid, found);
    }
    return found;
  }

  async function decide(image: ImageRef, applicable: readonly PullPolicyRow[]): Promise<CachedDecision> {
    const key = `${image.repoUid}\n${image.digest}\n${image.tag ?? ""}`;
    const now = clock.now();
    const hit = settled.get(key);
    if (hit !== undefined && hit.expires > now && hit.policies === applicable) return hit;
    const held = decisions.get(key);
    if (held) {
      const d = await held;
      if (d.expires > clock.now() && d.policies === applicable) return d;
      if (decisions.get(key) === held) decisions.delete(key);
    }
    const started = factGeneration;
    const computing = computeDecision(image, applicable, now).then((d) => {
      if (started !== factGeneration) d.expires = 0;
      else if (decisions.get(key) === computing) settled.set(key, d);
      return d;
    });
    decisions.set(key, computing);
    computing.catch(() => {
      if (decisions.get(key) === computing) decisions.delete(key);
    });
    if (decisions.size > maxDecisions) {
      const oldest = decisions.keys().next().value;
      if (oldest !== undefined) {
        decisions.delete(oldest);
        settled.delete(oldest);
      }
    }
    return computing;
  }

  async function computeDecision(
    image: ImageRef,
    applicable: readonly PullPolicyRow[],
    now: number,
  ): Promise<CachedDecision> {
    const needed = new Set<keyof ImageFacts>();
    for (const policy of applicable) for (const fact of factsNeeded(policy)) needed.add(fact);
    const facts = await gatherFacts(deps, image, needed, now);
    const violations = new Map<string, PolicyViolation[]>();
    for (const policy of applicable) {
      const policyPath = pathOf(image.repository, policy.parentUid);
      const found = violationsOf(policy, facts, { repository: image.repository, digest: image.digest });
      if (found.length === 0) continue;
      violations.set(
        policy.uid,
        found.map((v) => ({
          policyUid: policy.uid,
          policy: policy.name,
          policyPath,
          mode: policy.mode,
          rule: v.rule,
          detail: v.detail,
        })),
      );
    }
    return { policies: applicable, violations, expires: now + decisionTtl };
  }

  function decisionOf(
    d: CachedDecision,
    acting: (policy: PullPolicyRow) => boolean,
  ): { decision: PolicyDecision; acted: PullPolicyRow[] } {
    const violations: PolicyViolation[] = [];
    const warnings: string[] = [];
    const acted: PullPolicyRow[] = [];
    let allowed = true;
    for (const policy of d.policies) {
      const found = d.violations.get(policy.uid);
      if (found === undefined || !acting(policy)) continue;
      acted.push(policy);
      violations.push(...found);
      if (policy.mode === "ENFORCE") allowed = false;
      else warnings.push(warningValue(policy.name, found));
    }
    return { decision: { allowed, violations, warnings }, acted };
  }

  function emit(verdict: PullVerdict, acted: readonly PullPolicyRow[], request: PullRequest): void {
    if (deps.recordEvent === undefined) return;
    const now = clock.now();
    if (emitted.size > 1_000) {
      for (const [key, time] of emitted) if (now - time >= EVENT_COALESCE_MS) emitted.delete(key);
    }
    for (const policy of acted) {
      const verb = policy.mode === "ENFORCE" ? "pull_denied" : "pull_warned";
      const key = `${policy.uid}\n${request.digest}\n${verb}`;
      const last = emitted.get(key);
      if (last !== undefined && now - last < EVENT_COALESCE_MS) continue;
      emitted.set(key, now);
      deps.recordEvent({
        verb,
        policy,
        image: {
          repoUid: request.repoUid,
          repository: request.repository,
          digest: request.digest,
          tag: request.tag,
        },
        violations: verdict.violations.filter((v) => v.policyUid === policy.uid),
        principal: request.principal,
      });
    }
  }

  return {
    policiesFor,

    async evaluate(image) {
      const applicable = await policiesFor(image.repoUid);
      if (applicable.length === 0) return { allowed: true, violations: [], warnings: [] };
      return decisionOf(await decide(image, applicable), () => true).decision;
    },

    async checkPull(request) {
      const applicable = readyPoliciesFor(request.repoUid) ?? (await policiesFor(request.repoUid));
      if (applicable.length === 0) return undefined;
      const principal = request.principal;
      if (principal?.isAdmin) return undefined;
      if (request.tag !== undefined && COSIGN_TAG.test(request.tag)) return undefined;
      const identity = principal?.identityUid;
      const acting = (policy: PullPolicyRow) =>
        identity === undefined || !policy.exemptIdentities.includes(identity);
      if (identity !== undefined && !applicable.some(acting)) return undefined;
      if (isReferrer(request.content)) return undefined;
      const cached = await decide(request, applicable);
      if (cached.violations.size === 0) return undefined;
      const { decision, acted } = decisionOf(cached, acting);
      if (acted.length === 0) return undefined;
      const verdict: PullVerdict = { ...decision, auditReason: auditReasonOf(decision.violations) };
      if (!decision.allowed) verdict.deniedMessage = deniedMessageOf(decision.violations);
      emit(verdict, acted, request);
      return verdict;
    },

    close: unsubscribe,
  };
}

/** The registry path of `parentUid`, an ancestor of the repo (or the repo) whose path is `repository`. */
export function pathOf(repository: string, parentUid: string): string {
  const depth = parentUid.split("/").length;
  return repository.split("/").slice(0, depth).join("/");
}

/** Whether a manifest's JSON has a top-level `subject` (a referrer). Parsed only when the key appears. */
export function isReferrer(content: Uint8Array): boolean {
  const bytes = Buffer.isBuffer(content)
    ? content
    : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  if (bytes.indexOf(SUBJECT_KEY) < 0) return false;
  try {
    const parsed = JSON.parse(Buffer.from(content).toString("utf8")) as { subject?: unknown };
    return typeof parsed.subject === "object" && parsed.subject !== null;
  } catch {
    return false;
  }
}

/** `Warning: 299 - "<policy>: <reasons>"` (RFC 7234 §5.5): the text as a quoted string, ASCII only. */
export function warningValue(policy: string, violations: readonly PolicyViolation[]): string {
  const text = `${policy}: ${violations.map((v) => v.detail).join("; ")}`;
  const ascii = text.replace(/[^\x20-\x7e]/g, "?").replace(/[\\"]/g, (c) => `\\${c}`);
  return `299 - "${ascii}"`;
}

function byPolicy(violations: readonly PolicyViolation[]): PolicyViolation[][] {
  const groups = new Map<string, PolicyViolation[]>();
  for (const v of violations) {
    const list = groups.get(v.policyUid) ?? [];
    list.push(v);
    groups.set(v.policyUid, list);
  }
  return [...groups.values()];
}

/** `denied by policy <name> (<path>): <detail>; <detail>` for each ENFORCE policy, joined by " | ". */
function deniedMessageOf(violations: readonly PolicyViolation[]): string {
  return byPolicy(violations.filter((v) => v.mode === "ENFORCE"))
    .map((group) => {
      const first = group[0] as PolicyViolation;
      return `denied by policy ${first.policy} (${first.policyPath}): ${group.map((v) => v.detail).join("; ")}`;
    })
    .join(" | ");
}

function auditReasonOf(violations: readonly PolicyViolation[]): string {
  return byPolicy(violations)
    .map((group) => {
      const first = group[0] as PolicyViolation;
      return `${first.mode} policy ${first.policy} (${first.policyPath}): ${group.map((v) => v.rule).join(",")}`;
    })
    .join("; ");
}
