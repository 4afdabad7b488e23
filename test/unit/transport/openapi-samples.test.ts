import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type JsonObject, toJson } from "@bufbuild/protobuf";
import {
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
} from "../../../src/core/errors.js";
import { createServiceBindings, type ServiceDeps } from "../../../src/service-bindings.js";
import { toStatusJson } from "../../../src/transport/error-mapping.js";
import { buildMethodTable } from "../../../src/transport/method-table.js";
import { buildRestRoutes } from "../../../src/transport/rest-routes.js";
import {
  createDocValidator,
  loadOpenApiDocument,
  type OpenApiOperation,
} from "../../support/openapi-validator.js";
import { sampleMessage } from "../../support/proto-samples.js";

const doc = loadOpenApiDocument();
const validate = createDocValidator(doc);
const routes = buildRestRoutes(buildMethodTable(createServiceBindings({} as ServiceDeps)));
const shape = (path: string) => path.replace(/\{[^}]*\}/g, "{}");

function operationFor(httpMethod: string, templateSource: string): OpenApiOperation {
  const path = Object.keys(doc.paths).find((p) => shape(p) === shape(templateSource));
  const op = path === undefined ? undefined : doc.paths[path]?.[httpMethod.toLowerCase()];
  assert.ok(op, `${httpMethod} ${templateSource} is in the document`);
  return op;
}

const statusSchema = { $ref: "#/components/schemas/google.rpc.Status" };

describe("samples of every route validate against the OpenAPI document (ajv, draft 2020-12)", () => {
  it("request bodies, path values and 200 responses built from the messages (create + toJson)", () => {
    for (const route of routes) {
      const { entry, body, variables } = route.value;
      const where = `${route.httpMethod} ${route.template.source}`;
      const op = operationFor(route.httpMethod, route.template.source);
      const request = toJson(entry.method.input, sampleMessage(entry.method.input)) as JsonObject;
      if (body !== undefined) {
        const sent = body === "*" ? request : request[body.jsonName];
        assert.notEqual(sent, undefined, `${where}: the sample has a body`);
        const schema = op.requestBody?.content["application/json"].schema;
        assert.equal(validate(schema, sent), "", `${where}: request body ${JSON.stringify(sent)}`);
      }
      for (const [i, variable] of variables.entries()) {
        const parameter = op.parameters?.filter((p) => p.in === "path")[i];
        assert.equal(parameter?.["x-wharf-field"], variable.name);
        assert.equal(validate(parameter?.schema, "org/folder"), "", `${where}: path value`);
      }
      const response = toJson(entry.method.output, sampleMessage(entry.method.output));
      const schema = op.responses["200"]?.content["application/json"].schema;
      assert.equal(validate(schema, response), "", `${where}: response ${JSON.stringify(response)}`);
      assert.deepEqual(op.responses.default?.content["application/json"].schema, statusSchema);
    }
  });

  it("the server's error bodies match every operation's default response", () => {
    const errors = [
      invalidArgument("page_size", "must be positive", [{ field: "name", description: "required" }]),
      notFound("group", "acme"),
      alreadyExists("repo", "alpine", "a repo named alpine exists"),
      failedPrecondition("NOT_EMPTY", "the group has children", "acme"),
      permissionDenied("no capability"),
    ];
    for (const err of errors) {
      const body = toStatusJson(err, "iam.wharf.dev");
      assert.equal(validate(statusSchema, body), "", JSON.stringify(body));
    }
  });

  it("rejects what the server never sends (the validation bites)", () => {
    const repoSchema = { $ref: "#/components/schemas/platform.registry.v2.Repo" };
    const listSchema = { $ref: "#/components/schemas/platform.registry.v2.ListReposResponse" };
    assert.notEqual(validate(listSchema, { totalCount: 5 }), "", "an int64 as a JSON number");
    assert.notEqual(validate(repoSchema, { uid: 5 }), "", "a number for a string");
    assert.notEqual(validate(listSchema, { repos: {} }), "", "an object for a list");
    const detail = { "@type": "type.googleapis.com/google.rpc.Unknown" };
    assert.notEqual(
      validate(statusSchema, { code: 5, message: "x", details: [detail] }),
      "",
      "an unknown detail",
    );
  });
});
