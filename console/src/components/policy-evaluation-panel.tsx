import { Code, isWharfApiError, registry } from "wharf/sdk";
import { useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";
import { ApiError } from "./api-error";
import { Loading } from "./loading";
import "./policy-evaluation-panel.css";

/**
 * The pull policies' verdict on an image (`:evaluate`): whether a pull by someone the policies
 * apply to would be allowed now, and each failed rule with the policy and why. "Evaluate again"
 * reads it anew (after a signature, key, VEX document or policy change).
 */
export function PolicyEvaluationPanel({ repoUid, digest }: { repoUid: string; digest: string }) {
  const client = useClient();
  const verdict = useQuery(
    () => client.registry.policies.evaluatePolicies({ repoUid, digest }),
    [client, repoUid, digest],
  );
  const data = verdict.data;
  // Readers without registry_policies.list see the image all the same, just not the verdict.
  if (isWharfApiError(verdict.error) && verdict.error.code === Code.PermissionDenied) {
    return (
      <section aria-labelledby="evaluate-heading" data-testid="policy-evaluation">
        <h2 id="evaluate-heading">Pull policies</h2>
        <p className="muted">You may not read the pull policies of this repository.</p>
      </section>
    );
  }
  return (
    <section aria-labelledby="evaluate-heading" data-testid="policy-evaluation">
      <h2 id="evaluate-heading">Pull policies</h2>
      <p>
        <button type="button" className="secondary" onClick={verdict.reload} disabled={verdict.loading}>
          {verdict.loading ? "Evaluating…" : "Evaluate again"}
        </button>
      </p>
      {verdict.loading && !data && <Loading what="Evaluating the pull policies" />}
      <ApiError error={verdict.error} />
      <div aria-live="polite">
        {data && (
          <div className={`verdict ${data.allowed ? "allowed" : "denied"}`}>
            <p>
              <span className={data.allowed ? "badge ok" : "badge danger"} data-testid="verdict">
                {data.allowed ? "allowed" : "denied"}
              </span>{" "}
              {data.allowed
                ? data.violations.length > 0
                  ? "Pulls are served, with warnings:"
                  : "No policy objects to pulling this image."
                : "Pulls of this image are refused (exempt identities and the administrator excepted):"}
            </p>
            {data.violations.length > 0 && (
              <ul data-testid="violations">
                {data.violations.map((v) => (
                  <li key={`${v.policyUid}:${v.rule}:${v.detail}`}>
                    <strong>{v.policy}</strong>{" "}
                    <span className={v.mode === registry.Policy_Mode.WARN ? "badge warn" : "badge danger"}>
                      {registry.Policy_Mode[v.mode] ?? ""}
                    </span>{" "}
                    <code>{v.rule}</code>: {v.detail}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
      </div>
    </section>
  );
}
