import { newRootUid } from "../../src/core/uidp.js";
import type { TestServer } from "./wharf-server.js";

/**
 * Registers a person (a root identity, as login creates) straight through the store, and mints a
 * platform API token for them. Bindings are the caller's business.
 */
export async function registerPerson(
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
