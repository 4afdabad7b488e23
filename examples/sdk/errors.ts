// examples/sdk/errors.ts: every failure is a WharfApiError with the server's details decoded.
import { createWharfClient, staticToken, WharfApiError } from "wharf/sdk";

const client = createWharfClient({
  apiUrl: process.env.WHARF_API_URL ?? "http://127.0.0.1:8080",
  tokenSource: staticToken(process.env.WHARF_TOKEN ?? ""),
});
const org = process.argv[2] ?? ""; // an organization's uid

try {
  await client.registry.repos.createRepo({ parent: org, repo: { name: "Not A Valid Name" } });
} catch (err) {
  if (!(err instanceof WharfApiError)) throw err;
  console.log(`${err.codeName}: ${err.message}`);
  for (const v of err.fieldViolations) console.log(`  field ${v.field}: ${v.description}`);
  for (const v of err.preconditionViolations) console.log(`  ${v.type} ${v.subject}: ${v.description}`);
  if (err.resourceInfo) console.log(`  ${err.resourceInfo.resourceType} ${err.resourceInfo.resourceName}`);
}
