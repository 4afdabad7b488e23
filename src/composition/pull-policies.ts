import type { Clock } from "../core/clock.js";
import type { EventRecorder } from "../events/event-recorder.js";
import { Policy_Mode, PullPolicyDecisionSchema } from "../gen/platform/registry/v2/policies_pb.js";
import { violationMessage } from "../registry/supply-chain/policies/policy-mapping.js";
import {
  createPullPolicies,
  type PolicyEvent,
  type PullPoliciesHandle,
} from "../registry/supply-chain/policies/pull-policies.js";
import type {
  ImageVulnerabilities,
  SbomReader,
  SignatureVerifier,
  TrustedKeyring,
} from "../registry/supply-chain/supply-chain.js";
import type { Store } from "../storage/store.js";

/**
 * Builds the pull-policy evaluator (ADR 0058) over the four supply-chain facts (trusted keys,
 * signatures, VEX-aware findings, SBOMs) and the EOL data; it records its `policy.pull_denied` /
 * `policy.pull_warned` events in transactions of their own, off the pull's path (a failure is
 * logged, never the pull's). It stops following the change feed through `onClose`.
 */
export function buildPullPolicies(deps: {
  store: Store;
  clock: Clock;
  config: { eolGraceMonths: number };
  events: EventRecorder;
  keyring: TrustedKeyring;
  signatures: SignatureVerifier;
  vulnerabilities: ImageVulnerabilities;
  sboms: SbomReader;
  logger: (line: object) => void;
  onClose: (close: () => Promise<void>) => void;
}): PullPoliciesHandle {
  const { store, clock, events, logger } = deps;
  const recordEvent = (event: PolicyEvent) => {
    store
      .transaction((tx) =>
        events.change(
          tx,
          { principal: event.principal, clock },
          {
            resource: "policy",
            verb: event.verb,
            subject: event.policy.uid,
            group: event.image.repoUid,
            schema: PullPolicyDecisionSchema,
            body: {
              policyUid: event.policy.uid,
              policy: event.policy.name,
              mode: event.policy.mode === "ENFORCE" ? Policy_Mode.ENFORCE : Policy_Mode.WARN,
              repository: event.image.repository,
              repoUid: event.image.repoUid,
              digest: event.image.digest,
              tag: event.image.tag ?? "",
              violations: event.violations.map(violationMessage),
            },
          },
        ),
      )
      .catch((err: unknown) =>
        logger({
          level: "error",
          msg: "pull policy event not recorded",
          event: "pull-policy",
          error: String(err),
        }),
      );
  };
  const policies = createPullPolicies({
    store,
    clock,
    keyring: deps.keyring,
    signatures: deps.signatures,
    vulnerabilities: deps.vulnerabilities,
    sboms: deps.sboms,
    eolGraceMonths: deps.config.eolGraceMonths,
    recordEvent,
  });
  deps.onClose(async () => policies.close());
  return policies;
}
