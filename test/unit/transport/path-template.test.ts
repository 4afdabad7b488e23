import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { matchPathTemplate, parsePathTemplate, splitPath } from "../../../src/transport/path-template.js";
import { createRouteTable } from "../../../src/transport/route-table.js";

const match = (template: string, path: string) =>
  matchPathTemplate(parsePathTemplate(template), splitPath(path));

describe("parsePathTemplate", () => {
  it("parses literals, variables, nested field paths and verbs", () => {
    const t = parsePathTemplate("/registry/v2/repos/{repo.uid=**}/readme");
    assert.deepEqual(t.variables, ["repo.uid"]);
    assert.equal(t.literalCount, 4);
    assert.equal(t.multiAt, 3);
    assert.equal(t.verb, undefined);
    const v = parsePathTemplate("/iam/v2/roleBindings:batchCreate");
    assert.equal(v.verb, "batchCreate");
    assert.deepEqual(v.variables, []);
    assert.equal(parsePathTemplate("/x/{name}").segments[1]?.kind, "single");
  });

  it("rejects invalid templates", () => {
    for (const bad of ["/", "x/y", "/a/{b", "/a/{b}/{b}", "/a/**/b/**", "/a/{1x}", "/a/{b={c}}", "/a/b:"]) {
      assert.throws(() => parsePathTemplate(bad), /invalid path template/, bad);
    }
  });
});

describe("matchPathTemplate", () => {
  it("binds a ** variable to several raw segments", () => {
    assert.deepEqual(match("/iam/v2/groups/{uid=**}", "/iam/v2/groups/abc/def/012"), ["abc/def/012"]);
    assert.equal(match("/iam/v2/groups/{uid=**}", "/iam/v2/groups"), undefined, "** needs a segment");
    assert.equal(match("/iam/v2/groups/{uid=**}", "/iam/v2/groups/a//b"), undefined, "no empty segments");
  });

  it("lets ** be followed by literals and single variables", () => {
    assert.deepEqual(match("/registry/v2/repos/{uid=**}/readme", "/registry/v2/repos/a/b/readme"), ["a/b"]);
    assert.equal(match("/registry/v2/repos/{uid=**}/readme", "/registry/v2/repos/readme"), undefined);
    assert.deepEqual(
      match(
        "/registry/v2/repos/{repo_uid=**}/digests/{digest}/size",
        "/registry/v2/repos/o/r/digests/sha256:ab/size",
      ),
      ["o/r", "sha256:ab"],
    );
  });

  it("keeps literal segments inside a variable in its value", () => {
    assert.deepEqual(match("/v1/{name=projects/*/keys/*}", "/v1/projects/p1/keys/k1"), [
      "projects/p1/keys/k1",
    ]);
    assert.equal(match("/v1/{name=projects/*/keys/*}", "/v1/folders/p1/keys/k1"), undefined);
  });

  it("matches custom verbs only when the verb is present", () => {
    assert.deepEqual(match("/iam/v2/roleBindings:batchCreate", "/iam/v2/roleBindings:batchCreate"), []);
    assert.equal(match("/iam/v2/roleBindings:batchCreate", "/iam/v2/roleBindings"), undefined);
    assert.equal(match("/iam/v2/roleBindings:batchCreate", "/iam/v2/roleBindings:other"), undefined);
    assert.deepEqual(match("/v1/{name=**}:undelete", "/v1/a/b:undelete"), ["a/b"]);
    assert.equal(match("/iam/v2/roleBindings", "/iam/v2/roleBindings:batchCreate"), undefined);
  });
});

describe("createRouteTable", () => {
  const entries = [
    ["GET", "/registry/v2/repos/{uid=**}", "GetRepo"],
    ["GET", "/registry/v2/repos/{uid=**}/readme", "GetRepoReadme"],
    ["GET", "/registry/v2/repos", "ListRepos"],
    ["PATCH", "/registry/v2/repos/{repo.uid=**}", "UpdateRepo"],
    ["POST", "/iam/v2/roleBindings/{parent=**}", "CreateRoleBinding"],
    ["POST", "/iam/v2/roleBindings:batchCreate", "BatchCreate"],
    ["GET", "/{name=*}/things", "Wild"],
  ] as const;
  const table = createRouteTable(
    entries.map(([httpMethod, template, value]) => ({
      httpMethod,
      template: parsePathTemplate(template),
      value,
    })),
  );
  const found = (method: string, path: string) => {
    const m = table.match(method, path);
    return m.kind === "found" ? [m.value, ...m.vars] : m.kind;
  };

  it("prefers the template with more literal segments", () => {
    assert.deepEqual(found("GET", "/registry/v2/repos/a/b/readme"), ["GetRepoReadme", "a/b"]);
    assert.deepEqual(found("GET", "/registry/v2/repos/a/b"), ["GetRepo", "a/b"]);
    assert.deepEqual(found("GET", "/registry/v2/repos"), ["ListRepos"]);
  });

  it("routes custom verbs apart from collection paths", () => {
    assert.deepEqual(found("POST", "/iam/v2/roleBindings:batchCreate"), ["BatchCreate"]);
    assert.deepEqual(found("POST", "/iam/v2/roleBindings/org/grp"), ["CreateRoleBinding", "org/grp"]);
  });

  it("finds templates that start with a variable", () => {
    assert.deepEqual(found("GET", "/anything/things"), ["Wild", "anything"]);
    assert.deepEqual(found("GET", "/registry/things"), ["Wild", "registry"]);
  });

  it("answers method-not-allowed with the allowed methods, or not-found", () => {
    assert.deepEqual(table.match("DELETE", "/registry/v2/repos/a/b"), {
      kind: "method-not-allowed",
      allowed: ["GET", "PATCH"],
    });
    assert.equal(found("GET", "/registry/v3/repos"), "not-found");
    assert.equal(found("GET", "/nope"), "not-found");
  });
});
