import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type JsonValue } from "@bufbuild/protobuf";
import { DomainError } from "../../../src/core/errors.js";
import {
  type BatchCreateRoleBindingsRequest,
  BatchCreateRoleBindingsRequestSchema,
  CreateRoleBindingRequestSchema,
} from "../../../src/gen/platform/iam/v2/role_bindings_pb.js";
import {
  type UpdateRepoRequest,
  UpdateRepoRequestSchema,
} from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { errorDetailsRegistry } from "../../../src/transport/error-mapping.js";
import { decodeJsonBody, parseJson } from "../../../src/transport/json-body.js";

const registry = errorDetailsRegistry;

function violation(run: () => unknown): { field: string; description: string } {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof DomainError);
    assert.equal(err.code, 3);
    return err.details.fieldViolations![0]!;
  }
  assert.fail("expected INVALID_ARGUMENT");
}

describe("JSON bodies", () => {
  const repoField = UpdateRepoRequestSchema.fields.find((f) => f.name === "repo")!;
  const decodeRepo = (json: JsonValue) =>
    decodeJsonBody(UpdateRepoRequestSchema, repoField, json, create(UpdateRepoRequestSchema), registry);
  const decodeBatch = (json: JsonValue) =>
    decodeJsonBody(
      BatchCreateRoleBindingsRequestSchema,
      "*",
      json,
      create(BatchCreateRoleBindingsRequestSchema),
      registry,
    );

  it("decode a body field and a whole-request body, by camel or snake names", () => {
    const update = decodeRepo({ name: "a", create_time: "2026-01-01T00:00:00Z" }) as UpdateRepoRequest;
    assert.equal(update.repo?.name, "a");
    const batch = decodeBatch({
      parent: "p",
      requests: [{ roleBinding: { identity_uid: "i" } }],
    }) as BatchCreateRoleBindingsRequest;
    assert.equal(batch.requests[0]?.roleBinding?.identityUid, "i");
  });

  it("name the offending field by its path in the body", () => {
    assert.deepEqual(
      violation(() => decodeRepo({ colour: "red" })),
      { field: "colour", description: "unknown field" },
    );
    assert.equal(violation(() => decodeRepo({ name: 1 })).field, "name");
    assert.equal(violation(() => decodeRepo({ createTime: "soon" })).field, "createTime");
    assert.equal(violation(() => decodeRepo([])).field, "body");
    assert.equal(
      violation(() => decodeBatch({ requests: [{}, { roleBinding: { foo: 1 } }] })).field,
      "requests[1].roleBinding.foo",
    );
    assert.equal(violation(() => decodeBatch({ requests: {} })).field, "requests");
    const single = CreateRoleBindingRequestSchema.fields.find((f) => f.name === "parent")!;
    const scalarBody = () =>
      decodeJsonBody(
        CreateRoleBindingRequestSchema,
        single,
        5,
        create(CreateRoleBindingRequestSchema),
        registry,
      );
    assert.equal(violation(scalarBody).field, "body");
  });

  it("treat an empty body as {} and malformed JSON as a violation on body", () => {
    assert.deepEqual(parseJson("  "), {});
    assert.equal(violation(() => parseJson("{")).field, "body");
  });
});
