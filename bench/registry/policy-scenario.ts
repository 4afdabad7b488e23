// The pull-policy scenario of `bench:registry` (ADR 0058): manifest GET req/s and server CPU per
// request of one image, by a caller policies apply to, with no policy and with one ENFORCE policy of
// every rule that the image passes (signed with a trusted key, an SBOM referrer, a clean report, a
// tag whose release cycle is active), toggled run by run so that both see the same machine load.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtInRoleUid } from "../../dist/authz/built-in-roles.js";
import { generateCosignKey, signImage } from "../../test/support/cosign.js";
import { fetchRegistryClient, OCI_MANIFEST } from "../../test/support/registry-push.js";
import { attachReferrer } from "../../test/support/sbom-referrer.js";
import { pushSmallImage, registry } from "./client.js";
import { cpuSecondsOf } from "./processes.js";
import type { WharfInfo } from "./wharf-process.js";
import { type WrkResult, wrk } from "./wrk.js";

const REPO = "bench/gated";
const TAG = "3.12";

/** One measured GET load. */
export interface PolicyLoad extends WrkResult {
  cpuPerRequestUs: number;
}

/** Both sides of the scenario, each measured `runs` times. */
export interface PolicyScenario {
  none: PolicyLoad[];
  policy: PolicyLoad[];
}

async function api<T>(
  wharf: WharfInfo,
  method: string,
  path: string,
  body?: unknown,
  raw?: string,
): Promise<T> {
  const res = await fetch(`${wharf.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${wharf.apiToken}`, "content-type": "application/json" },
    ...(raw !== undefined ? { body: raw } : body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Sets the image up (org `bench` must exist) and measures; `root` runs `wharf import eol`. */
export async function runPolicyScenario(args: {
  wharf: WharfInfo;
  wharfDir: string;
  work: string;
  root: string;
  runs: number;
  seconds: number;
  warmupSeconds: number;
  wrkOptions: { threads: number; connections: number };
  log: (line: string) => void;
}): Promise<PolicyScenario> {
  const { wharf } = args;
  const reg = registry("wharf", wharf.registryUrl, { authorization: `Bearer ${wharf.registryToken}` });
  const { digest, manifest } = await pushSmallImage(reg, REPO, 1024);
  const org = (await api<{ groups: { uid: string }[] }>(wharf, "GET", "/iam/v2/groups?name=bench")).groups[0]
    ?.uid;
  if (!org) throw new Error("organization bench not found");
  const repoUid = (
    await api<{ repos: { uid: string }[] }>(
      wharf,
      "GET",
      `/registry/v2/repos?uidp.children_of=${org}&name=gated`,
    )
  ).repos[0]?.uid;
  if (!repoUid) throw new Error(`${REPO} not found`);
  await api(wharf, "POST", `/registry/v2/tags/${repoUid}`, { name: TAG, digest });
  await api(wharf, "POST", `/iam/v2/roleBindings/${org}`, {
    identityUid: wharf.pullerUid,
    roleUid: builtInRoleUid("viewer"),
  });

  const key = generateCosignKey("ecdsa-p256");
  await api(wharf, "POST", `/registry/v2/signingKeys/${org}`, {
    name: "bench",
    publicKeyPem: key.publicKeyPem,
  });
  const client = fetchRegistryClient(wharf.registryUrl, { token: wharf.registryToken });
  await signImage({ registry: client, repo: REPO, digest, key, layout: "referrer" });
  const spdx = JSON.stringify({
    spdxVersion: "SPDX-2.3",
    dataLicense: "CC0-1.0",
    SPDXID: "SPDXRef-DOCUMENT",
    name: "bench",
    documentNamespace: "https://example.test/bench",
    creationInfo: { created: "2026-01-01T00:00:00Z", creators: ["Tool: bench"] },
    packages: [
      { name: "openssl", SPDXID: "SPDXRef-openssl", versionInfo: "3.0.8", downloadLocation: "NOASSERTION" },
    ],
  });
  await attachReferrer(client, REPO, undefined, digest, spdx, {
    artifactType: "application/spdx+json",
    layerMediaType: "application/spdx+json",
    subjectSize: manifest.length,
  });
  const grype = {
    matches: [],
    source: { type: "image", target: { userInput: `${REPO}:${TAG}`, manifestDigest: digest } },
    descriptor: { name: "grype", version: "0.80.0" },
  };
  await api(
    wharf,
    "POST",
    `/registry/v1/vuln_reports/${repoUid}?digest=${digest}`,
    undefined,
    JSON.stringify(grype),
  );
  const eolFile = join(args.work, "python-eol.json");
  writeFileSync(
    eolFile,
    JSON.stringify([{ cycle: "3.12", releaseDate: "2023-10-02", eol: "2099-10-31", latest: "3.12.7" }]),
  );
  const imported = spawnSync(
    process.execPath,
    [
      join(args.root, "bin/wharf.js"),
      "import",
      "eol",
      "--data-dir",
      args.wharfDir,
      "--product",
      "python",
      "--match",
      `${REPO}:3.*`,
      eolFile,
    ],
    { encoding: "utf8" },
  );
  if (imported.status !== 0) throw new Error(`wharf import eol: ${imported.stderr}`);

  const url = `${wharf.registryUrl}/v2/${REPO}/manifests/${TAG}`;
  const headers = { authorization: `Bearer ${wharf.pullerRegistryToken}`, accept: OCI_MANIFEST };
  const policyBody = {
    name: "bench-gate",
    mode: "ENFORCE",
    requireSignature: true,
    denySeverity: "HIGH",
    onlyFixable: true,
    denyEol: true,
    requireSbom: true,
  };
  const measure = async (): Promise<PolicyLoad> => {
    const opts = { ...args.wrkOptions, headers };
    await wrk(url, { ...opts, seconds: args.warmupSeconds });
    const cpu = cpuSecondsOf(wharf.pid);
    const result = await wrk(url, { ...opts, seconds: args.seconds });
    return { ...result, cpuPerRequestUs: ((cpuSecondsOf(wharf.pid) - cpu) / result.requests) * 1e6 };
  };
  const out: PolicyScenario = { none: [], policy: [] };
  for (let run = 1; run <= args.runs; run++) {
    out.none.push(await measure());
    args.log(`run ${run}: wharf GET, no policy: ${out.none.at(-1)?.rps.toFixed(0)} req/s`);
    const created = await api<{ uid: string }>(wharf, "POST", `/registry/v2/policies/${org}`, policyBody);
    const check = await fetch(url, { headers });
    await check.arrayBuffer();
    if (check.status !== 200)
      throw new Error(`the gated image is refused (${check.status}): the scenario must pass every rule`);
    out.policy.push(await measure());
    args.log(
      `run ${run}: wharf GET, ENFORCE policy of every rule: ${out.policy.at(-1)?.rps.toFixed(0)} req/s`,
    );
    await api(wharf, "DELETE", `/registry/v2/policies/${created.uid}`);
  }
  return out;
}
