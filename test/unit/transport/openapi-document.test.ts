import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { createServiceBindings, type ServiceDeps } from "../../../src/service-bindings.js";
import { DOCS_PATH, OPENAPI_PATH, REDOC_BUNDLE_PATH } from "../../../src/transport/api-reference-routes.js";
import { buildMethodTable } from "../../../src/transport/method-table.js";
import { buildRestRoutes } from "../../../src/transport/rest-routes.js";
import { createRouteTable } from "../../../src/transport/route-table.js";
import { loadOpenApiDocument, type OpenApiOperation } from "../../support/openapi-validator.js";

const doc = loadOpenApiDocument();
// The routes the server's REST transcoder serves: the same bindings, method table and route
// compilation as createApiHandler (no handler runs, so the services need no dependencies).
const methods = buildMethodTable(createServiceBindings({} as ServiceDeps));
const routes = buildRestRoutes(methods);

/** `/a/{uid=**}/b` → `/a/{}/b`: the shape both the template and the document path have. */
const shapeOfTemplate = (source: string) => source.replace(/\{[^}]*\}/g, "{}");
const shapeOfPath = (path: string) => path.replace(/\{[^}]*\}/g, "{}");
const ref = (typeName: string) => ({ $ref: `#/components/schemas/${typeName}` });

function operationFor(httpMethod: string, templateSource: string): OpenApiOperation | undefined {
  const shape = shapeOfTemplate(templateSource);
  const path = Object.keys(doc.paths).find((p) => shapeOfPath(p) === shape);
  return path === undefined ? undefined : doc.paths[path]?.[httpMethod.toLowerCase()];
}

describe("the OpenAPI document (src/gen/openapi.json)", () => {
  it("is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(validator.version, "3.1");
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
  });

  it("describes every REST route with its method, path parameters, query parameters and body", () => {
    assert.ok(routes.length > 50, "the method table has the REST routes");
    for (const route of routes) {
      const where = `${route.httpMethod} ${route.template.source} (${route.value.entry.rpcName})`;
      const op = operationFor(route.httpMethod, route.template.source);
      assert.ok(op, `${where} is in the document`);
      const params = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === "path");
      assert.deepEqual(
        pathParams.map((p) => p["x-wharf-field"]),
        route.value.variables.map((v) => v.name),
        `${where}: path parameters`,
      );
      assert.ok(pathParams.every((p) => p.required === true));
      assert.deepEqual(
        params
          .filter((p) => p.in === "query")
          .map((p) => p.name)
          .sort(),
        [...route.value.query.keys()].sort(),
        `${where}: every spelling of every query parameter`,
      );
      const body = route.value.body;
      if (body === undefined) {
        assert.equal(op.requestBody, undefined, `${where}: no body`);
      } else {
        const expected =
          body === "*"
            ? ref(route.value.entry.method.input.typeName)
            : body.fieldKind === "message"
              ? ref(body.message.typeName)
              : undefined;
        const schema = op.requestBody?.content["application/json"].schema as Record<string, unknown>;
        assert.equal(op.requestBody?.required, true, `${where}: body required`);
        if (expected) assert.equal(schema.$ref, expected.$ref, `${where}: body schema`);
      }
      const output = route.value.entry.method.output.typeName;
      const responseSchema = op.responses["200"]?.content["application/json"].schema;
      if (output.startsWith("google.protobuf.")) {
        assert.equal((responseSchema as { $ref?: string }).$ref, undefined, `${where}: ${output} inline`);
      } else {
        assert.deepEqual(responseSchema, ref(output), `${where}: response schema`);
      }
      assert.deepEqual(op.responses.default?.content["application/json"].schema, ref("google.rpc.Status"));
      if (route.value.entry.auth.kind === "disabled") {
        assert.deepEqual(op.security, [], `${where}: no token needed`);
      } else {
        assert.equal(op.security, undefined, `${where}: the document-wide bearer requirement applies`);
        assert.equal(op["x-wharf-capabilities"]?.length, route.value.entry.auth.capabilities.length);
      }
    }
  });

  it("describes nothing the server does not serve", () => {
    const served = new Set(routes.map((r) => `${r.httpMethod} ${shapeOfTemplate(r.template.source)}`));
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) {
        assert.ok(served.has(`${method.toUpperCase()} ${shapeOfPath(path)}`), `${method} ${path} is served`);
      }
    }
    const operationIds = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).map((o) => o.operationId),
    );
    assert.equal(new Set(operationIds).size, operationIds.length, "operationIds are unique");
  });

  it("requires a bearer token by default and names the scheme", () => {
    assert.deepEqual(doc.security, [{ bearerAuth: [] }]);
    const components = doc.components as unknown as { securitySchemes: Record<string, unknown> };
    assert.deepEqual(components.securitySchemes.bearerAuth, {
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
      description: "A platform API token (`wharf auth token`, an STS exchange, or `wharf admin token`).",
    });
    assert.deepEqual(doc.paths["/ping/v2/ping"]?.get?.security, [], "Ping is IAM-disabled");
  });

  it("carries the protos' comments, protojson types and enums by name", () => {
    const schemas = doc.components.schemas as Record<
      string,
      { description?: string; properties?: Record<string, Record<string, unknown>>; enum?: string[] }
    >;
    const commented = Object.entries(schemas).filter(
      ([name, s]) => name.startsWith("platform.") && s.description,
    );
    assert.ok(commented.length > 0, "message comments");
    const byName = doc.paths["/registry/v2/repos"]?.get?.parameters?.find((p) => p.name === "name");
    assert.equal(
      (byName as { description?: string } | undefined)?.description,
      "Exact name.",
      "field comment",
    );
    const group = schemas["platform.iam.v2.Group"]!;
    assert.ok(
      Object.values(group.properties ?? {}).some((p) => typeof p.description === "string"),
      "field comments",
    );
    const repoList = schemas["platform.registry.v2.ListReposResponse"]!;
    assert.deepEqual(repoList.properties?.totalCount?.type, "string", "int64 is a string");
    const timestamps = JSON.stringify(doc.components.schemas).match(/"format":"date-time"/g) ?? [];
    assert.ok(timestamps.length > 0, "Timestamps are date-time strings");
    const capability = schemas["platform.capabilities.Capability"];
    assert.ok(capability?.enum?.includes("CAP_IAM_GROUPS_LIST"), "enums by value name");
  });

  it("leaves its own paths to the reference routes: no REST route matches them", () => {
    const table = createRouteTable(routes);
    for (const path of [OPENAPI_PATH, DOCS_PATH, REDOC_BUNDLE_PATH]) {
      assert.equal(table.match("GET", path).kind, "not-found", path);
    }
  });
});
