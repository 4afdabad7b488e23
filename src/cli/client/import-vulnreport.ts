import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import { apiUrlOf } from "./api-url.js";
import { currentToken } from "./auth-login.js";
import { UsageError } from "./output.js";

/** Where `wharf import vulnreport` writes. */
export interface VulnReportImportIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Default process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The operands and options `wharf import vulnreport` was given (a ParsedImport of `wharf import`). */
export interface VulnReportImportArgs {
  operands: readonly string[];
  options: Readonly<Record<string, unknown>>;
}

type Json = Record<string, unknown>;

async function getJson(apiUrl: string, token: string, path: string): Promise<Json> {
  const res = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json().catch(() => ({}))) as Json;
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}: ${String(body.message ?? "")}`);
  return body;
}

/**
 * The uid of repo `ORG/…/REPO` through the API: each group by name under the previous one (the
 * first at the root), then the repo by name in the last group.
 */
export async function resolveRepoUid(apiUrl: string, token: string, path: string): Promise<string> {
  const parts = path.split("/").filter((p) => p !== "");
  const repoName = parts.pop();
  if (!repoName || parts.length === 0) throw new UsageError(`--repo must be ORG/REPO (got "${path}")`);
  let parent = "";
  for (const name of parts) {
    const scope = parent === "" ? "uidp.in_root=true" : `uidp.children_of=${parent}`;
    const found = await getJson(apiUrl, token, `/iam/v2/groups?${scope}&name=${encodeURIComponent(name)}`);
    const group = (found.groups as { uid: string }[] | undefined)?.[0];
    if (!group) throw new Error(`no organization or group "${name}" in ${path} that you can see`);
    parent = group.uid;
  }
  const repos = await getJson(
    apiUrl,
    token,
    `/registry/v2/repos?uidp.children_of=${parent}&name=${encodeURIComponent(repoName)}`,
  );
  const repo = (repos.repos as { uid: string }[] | undefined)?.[0];
  if (!repo) throw new Error(`no repo "${path}" that you can see`);
  return repo.uid;
}

/**
 * `wharf import vulnreport --repo ORG/REPO --digest D FILE`: streams FILE to
 * `POST /registry/v1/vuln_reports/{repo uid}?digest=D` and prints what was stored. Resolves to the
 * exit code: 0, 1 when the upload failed, 2 for a usage error.
 */
export async function runVulnReportImport(
  parsed: VulnReportImportArgs,
  io: VulnReportImportIo,
): Promise<number> {
  const env = io.env ?? process.env;
  const text = (name: string) => {
    const value = parsed.options[name];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const values = { repo: text("repo"), digest: text("digest"), apiUrl: text("apiUrl"), token: text("token") };
  const [file, ...extra] = parsed.operands;
  if (!values.repo || !values.digest || !file || extra.length > 0) {
    io.stderr.write(
      "wharf import vulnreport: --repo, --digest and one FILE are required (wharf import vulnreport --help)\n",
    );
    return 2;
  }
  try {
    const apiUrl = apiUrlOf(values.apiUrl, env);
    const token = values.token || env.WHARF_TOKEN || (await currentToken(apiUrl));
    const size = (await stat(file)).size;
    const repoUid = await resolveRepoUid(apiUrl, token, values.repo);
    const res = await fetch(
      `${apiUrl}/registry/v1/vuln_reports/${repoUid}?digest=${encodeURIComponent(values.digest)}`,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": String(size),
        },
        body: Readable.toWeb(createReadStream(file)) as ReadableStream,
        duplex: "half",
      } as RequestInit,
    );
    const body = (await res.json().catch(() => ({}))) as Json;
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${String(body.message ?? "")}`);
    const scanner = (body.scanner ?? {}) as Json;
    const vulns = Number(body.vulnerabilityCount ?? 0);
    io.stdout.write(
      `stored ${vulns} vulnerabilities of ${values.repo}@${values.digest} (${String(scanner.name)} ${String(scanner.version ?? "")}) as ${String(body.id)}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`wharf import vulnreport: ${err.message}\n`);
      return 2;
    }
    io.stderr.write(`wharf import vulnreport: ${(err as Error).message}\n`);
    return 1;
  }
}
