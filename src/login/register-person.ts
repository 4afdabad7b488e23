import { newChildUid } from "../core/uidp.js";
import { registeredIdentityUid } from "../iam/registered-identity.js";
import type { IdentityRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import type { LoginProvider } from "./login-provider.js";

/** Who the identity provider says logged in (from its verified ID token). */
export interface VerifiedPerson {
  issuer: string;
  subject: string;
  /** The email, only when the provider says it is verified; else "". */
  email: string;
  /** A display name hint (name, preferred_username or the email's local part). */
  displayName: string;
}

/** Identity names must match ^[a-z0-9 ._-]{1,}$: lowercase the hint and drop everything else. */
export function identityNameFor(person: VerifiedPerson): string {
  const hint = person.displayName || person.email.split("@")[0] || "";
  const name = hint
    .toLowerCase()
    .replace(/[^a-z0-9 ._-]+/g, "")
    .trim()
    .slice(0, 63);
  return name === "" ? "user" : name;
}

/**
 * Registers `person` on their first login, or records another login: the identity is the root
 * identity `registeredIdentityUid(issuer, subject)` with a claimMatch on exactly that issuer and
 * subject. On registration through an organization's provider, the provider's default role is
 * bound at the organization (in the same transaction). Every login sets lastSeenTime, and a newly
 * verified email. Returns the identity uid and whether it was created now.
 */
export async function registerPerson(
  store: Pick<Store, "transaction">,
  person: VerifiedPerson,
  provider: LoginProvider,
  now: number,
): Promise<{ uid: string; created: boolean }> {
  const uid = registeredIdentityUid(person.issuer, person.subject);
  return store.transaction(async (tx) => {
    const existing = await tx.identities.get(uid);
    if (existing) {
      const next: IdentityRow = { ...existing, lastSeenTime: now };
      if (person.email !== "" && person.email !== existing.email) {
        next.email = person.email;
        next.updateTime = now;
      }
      await tx.identities.update(next);
      return { uid, created: false };
    }
    await tx.identities.insert({
      uid,
      name: identityNameFor(person),
      description: `Registered through ${person.issuer}`,
      email: person.email,
      claimMatch: { issuer: person.issuer, subject: person.subject },
      lastSeenTime: now,
      createTime: now,
      updateTime: now,
    });
    if (
      provider.defaultRole !== "" &&
      provider.groupUid !== "" &&
      (await tx.roles.get(provider.defaultRole))
    ) {
      await tx.roleBindings.insert({
        uid: newChildUid(provider.groupUid),
        groupUid: provider.groupUid,
        identityUid: uid,
        roleUid: provider.defaultRole,
        createTime: now,
        updateTime: now,
      });
    }
    return { uid, created: true };
  });
}
