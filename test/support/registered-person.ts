import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { newRootUid } from "../../src/core/uidp.js";
import type { TestServer } from "./wharf-server.js";

/** A registered person's identity uid and an API token of theirs. */
export interface RegisteredPerson {
  uid: string;
  token: string;
}

/** What may differ from the default registered person. */
export interface RegisteredPersonOptions {
  /** The identity's email; default `<name>@example.com`. */
  email?: string;
  /** How long the returned token is valid; default the test server's (one hour). */
  tokenTtlSeconds?: number;
}

/** What may differ from the default registered person bound to a role. */
export interface PersonWithRoleOptions extends RegisteredPersonOptions {
  /**
   * The token that creates the role binding; default the server's administrator token (pass a
   * fresh one when a test clock has moved past that token's hour).
   */
  bindingToken?: string;
}

/**
 * A registered person as a first login creates one: a root identity named `name` (email per
 * `options.email`, else `<name>@example.com`), matched on a fixed test issuer with subject `name`,
 * inserted through the store; and an API token of theirs, valid for `options.tokenTtlSeconds`.
 */
export async function registeredPerson(
  wharf: TestServer,
  name: string,
  options: RegisteredPersonOptions = {},
): Promise<RegisteredPerson> {
  const uid = newRootUid();
  const now = Date.now();
  await wharf.store.identities.insert({
    uid,
    name,
    description: "",
    email: options.email ?? `${name}@example.com`,
    claimMatch: { issuer: "https://idp.example.com", subject: name },
    createTime: now,
    updateTime: now,
  });
  return { uid, token: await wharf.tokenFor(uid, options.tokenTtlSeconds) };
}

/**
 * A registered person (as `registeredPerson` makes one) bound to the built-in role
 * `builtInRoleName` (e.g. "viewer", "registry.pull") at group `groupUid`, the binding created
 * through the API (`options.bindingToken`, else the administrator; the call must answer HTTP 200).
 */
export async function personWithRole(
  wharf: TestServer,
  name: string,
  groupUid: string,
  builtInRoleName: string,
  options: PersonWithRoleOptions = {},
): Promise<RegisteredPerson> {
  const person = await registeredPerson(wharf, name, options);
  await wharf.create(
    `/iam/v2/roleBindings/${groupUid}`,
    { identityUid: person.uid, roleUid: builtInRoleUid(builtInRoleName) },
    options.bindingToken,
  );
  return person;
}
