// examples/sdk/tag-history.ts: with the login of `wharf auth login`, what a tag points to and pointed to.
import { createWharfClient } from "wharf/sdk";
import { storedLogin } from "wharf/sdk/node";

const apiUrl = process.env.WHARF_API_URL ?? "http://127.0.0.1:8080";
const client = createWharfClient({ apiUrl, tokenSource: storedLogin({ apiUrl }) }); // refreshes as needed
const [image = "acme/app", tag = "latest"] = process.argv.slice(2);

console.log(`${image}:${tag} is ${await client.resolve(`${image}:${tag}`)}`);
for await (const record of client.tagHistory(image, tag, { start: "2024-01-01T00:00:00Z" })) {
  console.log(`${record.updateTimestamp} ${record.deleted ? "(deleted)" : record.digest}`);
}
