// examples/sdk/ci-exchange.ts: a CI job's OIDC token exchanged for a Wharf identity's token (no secret stored).
import { createWharfClient, stsExchange } from "wharf/sdk";

const apiUrl = process.env.WHARF_API_URL ?? "http://127.0.0.1:8080";
const client = createWharfClient({
  apiUrl,
  tokenSource: stsExchange({
    apiUrl,
    identity: process.env.WHARF_IDENTITY ?? "", // the uid of an identity whose claim match fits the CI token
    externalToken: process.env.CI_OIDC_TOKEN ?? "", // e.g. a GitHub Actions ID token
  }),
});

const pushToken = await client.registryToken(`repository:${process.argv[2] ?? "acme/app"}:pull,push`);
console.log(`registry token: ${pushToken.length} characters`);
const { groups } = await client.iam.groups.listGroups({ uidp: { inRoot: true } });
console.log(`organizations: ${groups.map((g) => g.name).join(", ")}`);
