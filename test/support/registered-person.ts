import { newRootUid } from "../../src/core/uidp.js";
import type { TestServer } from "./wharf-server.js";

/**
 * A registered person as a first login creates one (a root identity named `name`, email
 * `<name>@example.com`, matched on a fixed test issuer), and an API token of theirs.
 */
export async function registeredPerson(
  wharf: TestServer,
  name: string,
): Promise<{ uid: string; token: string }> {
  const uid = newRootUid();
  const now = Date.now();
  await wharf.store.identities.insert({
    uid,
    name,
    description: "",
    email: `${name}@example.com`,
    claimMatch: { issuer: "https://idp.example.com", subject: name },
    createTime: now,
    updateTime: now,
  });
  return { uid, token: await wharf.tokenFor(uid) };
}
