// examples/sdk/list-repos.ts: every repo of every organization, page by page.
import { createWharfClient, listAll, staticToken } from "wharf/sdk";

const client = createWharfClient({
  apiUrl: process.env.WHARF_API_URL ?? "http://127.0.0.1:8080",
  tokenSource: staticToken(process.env.WHARF_TOKEN ?? ""), // e.g. from `wharf auth token`
});

for await (const org of listAll(client.iam.groups.listGroups, { uidp: { inRoot: true } })) {
  const request = { uidp: { descendantsOf: org.uid }, orderBy: "name", pageSize: 100 };
  for await (const repo of listAll(client.registry.repos.listRepos, request)) {
    console.log(`${org.name}: ${repo.name} (${repo.uid})`);
  }
}
