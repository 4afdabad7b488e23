import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDomainError } from "../../../src/core/errors.js";
import { CONSOLE_LOGIN_CALLBACK_PATH, checkLoginRedirect } from "../../../src/login/login-redirect.js";

const API = "https://wharf.example.com";

function refusal(value: string): string {
  try {
    checkLoginRedirect(value, API);
  } catch (err) {
    assert.ok(isDomainError(err), String(err));
    assert.deepEqual(
      err.details.fieldViolations?.map((v) => v.field),
      ["redirect"],
    );
    return err.message;
  }
  return assert.fail(`${value} was accepted`);
}

describe("checkLoginRedirect", () => {
  it("accepts the CLI's loopback callbacks", () => {
    assert.equal(checkLoginRedirect("http://127.0.0.1:5000/cb", API), "http://127.0.0.1:5000/cb");
    assert.equal(checkLoginRedirect("http://localhost:1/x?y=1", API), "http://localhost:1/x?y=1");
    assert.equal(checkLoginRedirect("http://[::1]:8/", API), "http://[::1]:8/");
  });

  it("accepts this server's console callback page, and only that page of it", () => {
    const callback = `${API}${CONSOLE_LOGIN_CALLBACK_PATH}`;
    assert.equal(checkLoginRedirect(callback, API), callback);
    refusal(`${API}/oauth/token`);
    refusal(`${API}/login/callbackx`);
    refusal(`http://wharf.example.com${CONSOLE_LOGIN_CALLBACK_PATH}`);
    refusal(`https://wharf.example.com.evil.example${CONSOLE_LOGIN_CALLBACK_PATH}`);
  });

  it("refuses other hosts, schemes, credentials and garbage with a field violation", () => {
    assert.match(refusal("https://evil.example/callback"), /loopback/);
    refusal("ftp://127.0.0.1/cb");
    assert.match(refusal("http://user:pw@127.0.0.1/cb"), /credentials/);
    assert.match(refusal("not a url"), /absolute URL/);
  });
});
