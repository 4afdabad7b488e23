import { beforeEach, describe, expect, it } from "vitest";
import { clearSession, loadSession, normalizeToken, saveSession, sessionEndsAt } from "./session";

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

describe("sessionEndsAt", () => {
  const jwtWith = (claims: object) =>
    `eyJhbGciOiJFUzI1NiJ9.${btoa(JSON.stringify(claims)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_")}.sig`;

  it("takes the recorded expiry first, else the token's exp claim", () => {
    expect(
      sessionEndsAt({ token: jwtWith({ exp: 100 }), method: "browser", expiry: "2026-01-01T00:00:00Z" }),
    ).toBe(Date.parse("2026-01-01T00:00:00Z"));
    expect(sessionEndsAt({ token: jwtWith({ exp: 1_800_000_000 }), method: "token" })).toBe(
      1_800_000_000_000,
    );
  });

  it("knows nothing from a token without exp or one that does not decode", () => {
    expect(sessionEndsAt({ token: jwtWith({ sub: "x" }), method: "token" })).toBeUndefined();
    expect(sessionEndsAt({ token: "a.%%%.c", method: "token" })).toBeUndefined();
  });
});
