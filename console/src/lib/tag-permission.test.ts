import { describe, expect, it } from "vitest";
import type { WhoAmI } from "wharf/sdk";
import { mayUpdateTags } from "./tag-permission";

const person = (groups: WhoAmI["groups"], admin = false): WhoAmI => ({
  identity: { uid: "u", name: "n", email: "" },
  admin,
  groups,
});
const group = (uid: string, capabilities: string[]) => ({
  uid,
  name: uid,
  role: { uid: "r", name: "r" },
  capabilities,
});

describe("mayUpdateTags", () => {
  it("needs tag.update on the repo or a group above it", () => {
    expect(mayUpdateTags(person([group("org1", ["tag.update"])]), "org1/f1/r1")).toBe(true);
    expect(mayUpdateTags(person([group("org1", ["tag.list"])]), "org1/f1/r1")).toBe(false);
    expect(mayUpdateTags(person([group("org1/f1/r1", ["tag.update"])]), "org1/f1/r1")).toBe(true);
  });
  it("does not take a sibling whose uid is a prefix", () => {
    expect(mayUpdateTags(person([group("org1", ["tag.update"])]), "org12/r1")).toBe(false);
  });
  it("lets the administrator, not a signed-out session", () => {
    expect(mayUpdateTags(person([], true), "org1/r1")).toBe(true);
    expect(mayUpdateTags(undefined, "org1/r1")).toBe(false);
  });
});
