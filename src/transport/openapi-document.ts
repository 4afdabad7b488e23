import type { DescField, DescMessage, DescService } from "@bufbuild/protobuf";
import type { ServiceBinding } from "../core/service.js";
import { type Capability, CapabilitySchema } from "../gen/platform/capabilities/capabilities_pb.js";
import { buildMethodTable, type MethodAuth } from "./method-table.js";
import {
  createSchemaCollector,
  type JsonSchema,
  SCHEMA_REF_PREFIX,
  type SchemaCollector,
} from "./openapi-schemas.js";
import type { PathTemplate } from "./path-template.js";
import { protoComment } from "./proto-comments.js";
import type { QueryField } from "./query-params.js";
import { buildRestRoutes, type RestRoute } from "./rest-routes.js";
import type { RouteEntry } from "./route-table.js";

/** An OpenAPI 3.1 document, as plain JSON. */
export type OpenApiDocument = { [key: string]: unknown };

/** What {@link buildOpenApiDocument} describes. */
export interface OpenApiInput {
  /** Every service whose `google.api.http` bindings the REST transcoder serves. */
  services: readonly DescService[];
  /** google.rpc.Status: the body of every error answer. */
  status: DescMessage;
  /** The messages an error's `details` may hold (ErrorInfo, BadRequest, …). */
  errorDetails: readonly DescMessage[];
  title: string;
  version: string;
  description: string;
}

/** The name of the bearer token security scheme. */
export const BEARER_SCHEME = "bearerAuth";

/**
 * Builds the OpenAPI 3.1 document of the REST API from the same route compilation the REST
 * transcoder runs (`buildMethodTable` + `buildRestRoutes`), so every route the server answers is
 * described, with:
 * - one path per template (`{uid=**}` → `{uid}`, the verb kept: `/x:batchCreate`), templates of the
 *   same shape sharing one path whose parameter names come from its first route (OpenAPI forbids
 *   two paths differing only in parameter names); `x-wharf-field` names the field each one sets;
 * - query parameters for every request field the transcoder accepts there, in each spelling it
 *   accepts (`page_size` and `pageSize`), none when the body is `*`;
 * - the body (`*`: the request message; a field: that field) and the 200 response, as protojson;
 * - `default`: google.rpc.Status with its typed details, on every operation;
 * - bearer security except on IAM-disabled RPCs, the required capabilities in the description and
 *   in `x-wharf-capabilities`.
 * Throws when the services are not servable (see `buildMethodTable`), or two routes share a method
 * and a path.
 */
export function buildOpenApiDocument(input: OpenApiInput): OpenApiDocument {
  const bindings = input.services.map((service): ServiceBinding => {
    const handlers = Object.fromEntries(service.methods.map((m) => [m.localName, unreachable]));
    return { service, handlers } as unknown as ServiceBinding;
  });
  const routes = buildRestRoutes(buildMethodTable(bindings));
  const schemas = createSchemaCollector();
  const paths = new Map<string, { key: string; operations: Record<string, unknown> }>();
  const bindingCount = new Map<string, number>();

  for (const route of routes) {
    const shape = openApiPath(route.template, () => "{}");
    let item = paths.get(shape);
    if (!item) {
      item = { key: openApiPath(route.template, (i) => `{${route.template.variables[i]}}`), operations: {} };
      paths.set(shape, item);
    }
    const method = route.httpMethod.toLowerCase();
    if (item.operations[method]) throw new Error(`two routes for ${route.httpMethod} ${item.key}`);
    const names = [...item.key.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const rpc = route.value.entry.rpcName;
    const n = (bindingCount.get(rpc) ?? 0) + 1;
    bindingCount.set(rpc, n);
    item.operations[method] = operation(route, names, n, schemas);
  }

  const errorSchema = statusSchema(input, schemas);
  const sortedPaths = [...paths.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const services = [...new Set(routes.map((r) => r.value.entry.service))];
  return {
    openapi: "3.1.0",
    info: {
      title: input.title,
      version: input.version,
      description: input.description,
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    security: [{ [BEARER_SCHEME]: [] }],
    tags: services.map((s) => ({ name: s.typeName, description: protoComment(s) || s.name })),
    "x-tagGroups": tagGroups(services),
    paths: Object.fromEntries(sortedPaths.map((p) => [p.key, p.operations])),
    components: {
      securitySchemes: {
        [BEARER_SCHEME]: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A platform API token (`wharf auth token`, an STS exchange, or `wharf admin token`).",
        },
      },
      schemas: { ...schemas.components(), [STATUS_NAME]: errorSchema },
    },
  };
}

const STATUS_NAME = "google.rpc.Status";

function unreachable(): never {
  throw new Error("the OpenAPI generator never calls handlers");
}

/** `/iam/v2/groups/{uid=**}` → `/iam/v2/groups/{uid}`; `variable(i)` writes variable i. */
function openApiPath(template: PathTemplate, variable: (index: number) => string): string {
  let out = "";
  let last = -1;
  for (const segment of template.segments) {
    if (segment.variable >= 0) {
      if (segment.variable !== last) out += `/${variable(segment.variable)}`;
      last = segment.variable;
      continue;
    }
    last = -1;
    if (segment.kind !== "literal") throw new Error(`${template.source}: a wildcard outside a variable`);
    out += `/${segment.value}`;
  }
  return template.verb === undefined ? out : `${out}:${template.verb}`;
}

function operation(
  route: RouteEntry<RestRoute>,
  names: readonly string[],
  bindingNumber: number,
  schemas: SchemaCollector,
): Record<string, unknown> {
  const { entry, variables, body, query } = route.value;
  const { method, service } = entry;
  const parameters: unknown[] = variables.map((variable, i) => {
    const leaf = variable.fields[variable.fields.length - 1]!;
    const own = route.template.segments.filter((s) => s.variable === i);
    const notes = [describedAs(schemas.field(leaf))];
    if (names[i] !== variable.name) notes.push(`Sets the request field \`${variable.name}\`.`);
    if (own.some((s) => s.kind === "literal")) {
      // `{name=projects/*}`: the path shows `{name}`, the value must still have this form.
      const form = own.map((s) => (s.kind === "literal" ? s.value : s.kind === "single" ? "*" : "**"));
      notes.push(`Has the form \`${form.join("/")}\`.`);
    }
    if (own.some((s) => s.kind === "multi")) notes.push("May contain `/` (sent as is or as `%2F`).");
    return {
      name: names[i],
      in: "path",
      required: true,
      description: notes.filter((s) => s !== "").join("\n\n"),
      schema: plain(schemas.field(leaf)),
      "x-wharf-field": variable.name,
    };
  });
  parameters.push(...queryParameters(query, route.value.updateMask !== undefined, schemas));

  const op: Record<string, unknown> = {
    operationId: `${entry.rpcName.replace(/^platform\./, "").replace(/[./]/g, "_")}${bindingNumber > 1 ? `_${bindingNumber}` : ""}`,
    summary: method.name,
    description: [protoComment(method), authNote(entry.auth)].filter((s) => s !== "").join("\n\n"),
    tags: [service.typeName],
  };
  if (parameters.length > 0) op.parameters = parameters;
  if (body !== undefined) {
    op.requestBody = {
      required: true,
      content: {
        "application/json": { schema: body === "*" ? schemas.message(method.input) : schemas.field(body) },
      },
    };
  }
  op.responses = {
    "200": {
      description: `OK: ${method.output.typeName}`,
      content: { "application/json": { schema: schemas.message(method.output) } },
    },
    default: {
      description: "An error: a google.rpc.Status with its code, message and typed details.",
      content: { "application/json": { schema: { $ref: `${SCHEMA_REF_PREFIX}${STATUS_NAME}` } } },
    },
  };
  if (entry.auth.kind === "disabled") op.security = [];
  else op["x-wharf-capabilities"] = entry.auth.capabilities.map(capabilityName);
  if (method.deprecated) op.deprecated = true;
  return op;
}

/** One parameter per accepted spelling; the proto path first, the others described as aliases. */
function queryParameters(
  query: ReadonlyMap<string, QueryField>,
  maskFromBody: boolean,
  schemas: SchemaCollector,
): unknown[] {
  const spellings = new Map<QueryField, string[]>();
  for (const [key, field] of query) spellings.set(field, [...(spellings.get(field) ?? []), key]);
  const out: unknown[] = [];
  for (const [field, keys] of spellings) {
    const leaf: DescField = field.fields[field.fields.length - 1]!;
    const full = schemas.field(leaf);
    const schema = plain(full);
    const notes = [describedAs(full)];
    if (maskFromBody && field.protoPath === "update_mask") {
      notes.push("Without it, the fields present in the body are updated.");
    }
    const comment = notes.filter((s) => s !== "").join("\n\n");
    const sorted = [field.protoPath, ...keys.filter((k) => k !== field.protoPath).sort()];
    for (const key of sorted) {
      const description = key === field.protoPath ? comment : `Same as \`${field.protoPath}\`.`;
      const parameter: Record<string, unknown> = { name: key, in: "query", schema };
      if (description) parameter.description = description;
      if (field.repeated) parameter.explode = true;
      out.push(parameter);
    }
  }
  return out;
}

/** The description of a field's schema: its comment, else its type's (FieldMask, …), else "". */
function describedAs(schema: JsonSchema): string {
  return typeof schema.description === "string" ? schema.description : "";
}

/** A schema without its description (parameters carry their own). */
function plain(schema: JsonSchema): JsonSchema {
  const { description: _description, ...rest } = schema;
  return rest;
}

function authNote(auth: MethodAuth): string {
  switch (auth.kind) {
    case "disabled":
      return "**Authorization:** none (no token needed).";
    case "unscoped":
      return `**Authorization:** a bearer token; ${capabilityList(auth.capabilities)}, checked on the groups the request acts on.`;
    case "scoped":
      return `**Authorization:** a bearer token; ${capabilityList(auth.capabilities)} on the group named by \`${auth.scopeField}\`.`;
  }
}

function capabilityList(capabilities: readonly Capability[]): string {
  return capabilities.length === 0
    ? "no capability"
    : `capabilities ${capabilities.map((c) => `\`${capabilityName(c)}\``).join(", ")}`;
}

function capabilityName(capability: number): string {
  return CapabilitySchema.values.find((v) => v.number === capability)?.name ?? String(capability);
}

/** google.rpc.Status with `details` as the typed messages the server sends, told apart by `@type`. */
function statusSchema(input: OpenApiInput, schemas: SchemaCollector): JsonSchema {
  const base = { type: "object", properties: {} as Record<string, JsonSchema> };
  for (const field of input.status.fields) base.properties[field.jsonName] = schemas.field(field);
  const variants = input.errorDetails.map((detail) => ({
    allOf: [schemas.message(detail)],
    properties: { "@type": { const: `type.googleapis.com/${detail.typeName}` } },
    required: ["@type"],
  }));
  base.properties.details = {
    ...base.properties.details,
    type: "array",
    items: { oneOf: [...variants] },
  };
  return {
    ...base,
    description: [protoComment(input.status), "`code` is a google.rpc.Code number (5 = NOT_FOUND, …)."]
      .filter((s) => s !== "")
      .join("\n\n"),
  };
}

/** Redoc's tag groups: one per proto package (`platform.iam.v2`). */
function tagGroups(services: readonly DescService[]): unknown[] {
  const groups = new Map<string, string[]>();
  for (const s of services) {
    const pkg = s.file.proto.package;
    groups.set(pkg, [...(groups.get(pkg) ?? []), s.typeName]);
  }
  return [...groups].map(([name, tags]) => ({ name, tags }));
}
