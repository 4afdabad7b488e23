import { beforeEach, describe, expect, it } from "vitest";
import { clearSession, loadSession, normalizeToken, saveSession } from "./session";

const JWT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";

describe("the session in sessionStorage", () => {
  beforeEach(() => window.sessionStorage.clear());

  it("keeps a session for the tab and forgets it on sign out", () => {
    expect(loadSession()).toBeUndefined();
    saveSession({ token: JWT, method: "token" });
    expect(loadSession()).toEqual({ token: JWT, method: "token" });
    expect(window.localStorage.length).toBe(0);
    clearSession();
    expect(loadSession()).toBeUndefined();
  });

  it("ignores a corrupt or empty stored value", () => {
    window.sessionStorage.setItem("wharf.console.session", "{not json");
    expect(loadSession()).toBeUndefined();
    window.sessionStorage.setItem("wharf.console.session", JSON.stringify({ token: "" }));
    expect(loadSession()).toBeUndefined();
  });
});

describe("normalizeToken", () => {
  it("trims space and a Bearer prefix", () => {
    expect(normalizeToken(`  Bearer ${JWT}\n`)).toBe(JWT);
    expect(normalizeToken(JWT)).toBe(JWT);
  });

  it("refuses what is not shaped like a JWT", () => {
    expect(normalizeToken("")).toBeUndefined();
    expect(normalizeToken("hello")).toBeUndefined();
    expect(normalizeToken("a.b")).toBeUndefined();
    expect(normalizeToken("a.b.c d")).toBeUndefined();
  });
});
