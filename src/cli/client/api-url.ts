// The API URL of the login commands (`wharf auth login|logout`, `wharf import vulnreport`).

/** The API the CLI talks to: --api-url, else WHARF_API_URL, else the embedded default. */
export function apiUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const value = flag || env.WHARF_API_URL || "http://127.0.0.1:8080";
  return new URL(value).origin;
}
