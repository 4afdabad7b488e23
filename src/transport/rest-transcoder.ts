import {
  create,
  type DescField,
  isMessage,
  type JsonValue,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { isFieldError, type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import { createJsonEncoders } from "../codec/json-encoder.js";
import { invalidArgument } from "../core/errors.js";
import { DEFAULT_ERROR_DOMAIN, methodNotAllowed, routeNotFound } from "./error-mapping.js";
import { setAtPath } from "./field-path.js";
import { FieldValueError } from "./field-values.js";
import { type AnyRequest, type AnyResponse, sendError, sendJson } from "./http-response.js";
import { decodeJsonBody, parseJson, readBody } from "./json-body.js";
import type { MethodEntry } from "./method-table.js";
import type { CallRecord, Pipeline } from "./pipeline.js";
import { applyQueryParams } from "./query-params.js";
import { buildRestRoutes, type RestRoute } from "./rest-routes.js";
import { createRouteTable } from "./route-table.js";

/** Options of {@link createRestTranscoder}. */
export interface RestTranscoderOptions {
  methods: readonly MethodEntry[];
  pipeline: Pipeline;
  /** Types for `google.protobuf.Any` in JSON bodies and responses. */
  registry: Registry;
  /** Larger request bodies are answered 413 RESOURCE_EXHAUSTED. */
  maxBodyBytes: number;
}

/**
 * Serves one REST request already started on the pipeline (`record`); never rejects. `knows(path)`
 * tells whether any REST route (of any method) has that path.
 */
export type RestHandler = ((req: AnyRequest, res: AnyResponse, record: CallRecord) => Promise<void>) & {
  knows(path: string): boolean;
};

/**
 * Creates the REST JSON transcoder over the `google.api.http` annotations of `methods`. Per
 * request: route by method + most specific template (unknown path → 404 NOT_FOUND, other method
 * only → 405 UNIMPLEMENTED with `Allow`), decode the body (`fromJson`, unknown fields rejected),
 * then path variables, then query parameters (so the path wins over the body), derive
 * `update_mask` from the body's keys when the query gives none, run the pipeline and handler, and
 * answer 200 with the protobuf JSON of the response (`createJsonEncoders`: what `toJson` writes).
 * Every failure is a google.rpc.Status JSON body. A rate-limited call's headers go with either.
 */
export function createRestTranscoder(options: RestTranscoderOptions): RestHandler {
  const { pipeline, registry, maxBodyBytes } = options;
  const routes = buildRestRoutes(options.methods);
  const table = createRouteTable(routes);
  // ErrorInfo.domain for routing errors, by the first path segment (`/iam/…` → iam.wharf.dev).
  const domainByPrefix = new Map<string, string>();
  for (const r of routes) {
    const first = r.template.segments[0];
    if (first?.kind === "literal") domainByPrefix.set(first.value, r.value.entry.domain);
  }
  const jsonEncoderOf = createJsonEncoders(registry);

  const serve = async (req: AnyRequest, res: AnyResponse, record: CallRecord): Promise<void> => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const query = q < 0 ? "" : url.slice(q + 1);
    const httpMethod = req.method ?? "GET";
    const match = table.match(httpMethod, record.path);
    if (match.kind !== "found") {
      const domain = domainByPrefix.get(record.path.split("/")[1] ?? "") ?? DEFAULT_ERROR_DOMAIN;
      if (match.kind === "not-found") {
        sendError(req, res, pipeline.fail(record, routeNotFound(httpMethod, record.path)), domain);
      } else {
        const err = methodNotAllowed(httpMethod, record.path, match.allowed);
        sendError(req, res, pipeline.fail(record, err), domain, { allow: match.allowed.join(", ") });
      }
      return;
    }
    const route = match.value;
    const entry = route.entry;
    try {
      const request = await decodeRequest(req, route, match.vars, query);
      const response = await pipeline.invoke(record, entry, request, req.headers.authorization);
      const output = entry.method.output;
      const message = isMessage(response, output) ? response : create(output, response as never);
      sendJson(res, 200, JSON.stringify(jsonEncoderOf(output)(message)), record.rateLimitHeaders);
    } catch (err) {
      sendError(req, res, pipeline.fail(record, err), entry.domain, record.rateLimitHeaders);
    }
  };
  // A path some method answers is "method-not-allowed" for the others: probing with one method tells both.
  const knows = (path: string) => table.match("GET", path).kind !== "not-found";
  return Object.assign(serve, { knows });

  async function decodeRequest(
    req: AnyRequest,
    route: RestRoute,
    vars: string[],
    query: string,
  ): Promise<Message> {
    const input = route.entry.method.input;
    let request: Message = create(input);
    let bodyJson: JsonValue | undefined;
    if (route.body !== undefined) {
      const raw = await readBody(req, maxBodyBytes);
      bodyJson = parseJson(raw.toString("utf8"));
      request = decodeJsonBody(input, route.body, bodyJson, request, registry);
    }
    const target = reflect(input, request);
    for (let i = 0; i < route.variables.length; i++) {
      const variable = route.variables[i]!;
      setVariable(target, variable.name, variable.fields, variable.decode, vars[i]!);
    }
    const fromQuery = query === "" ? undefined : applyQueryParams(route.query, query, target);
    if (route.updateMask && !fromQuery?.has("update_mask") && route.body !== "*" && route.body) {
      setMaskFromBody(target, route.updateMask, route.body, bodyJson);
    }
    return request;
  }
}

function setVariable(
  target: ReflectMessage,
  name: string,
  fields: readonly DescField[],
  decode: (raw: string) => unknown,
  raw: string,
): void {
  let text = raw;
  if (raw.includes("%")) {
    try {
      text = decodeURIComponent(raw);
    } catch {
      throw invalidArgument(name, "malformed percent-encoding in the URL path");
    }
  }
  try {
    setAtPath(target, fields, decode(text));
  } catch (err) {
    if (err instanceof FieldValueError || isFieldError(err)) throw invalidArgument(name, err.message);
    throw err;
  }
}

/**
 * update_mask = the body's keys as proto names (AIP-134 "fields present in the body"), nested like
 * grpc-gateway's: a key holding a JSON object for a plain message field contributes one path per
 * key inside it (`oidc.client_secret`), recursively; well-known types, maps, lists and empty
 * objects contribute the field's own path.
 */
function setMaskFromBody(
  target: ReflectMessage,
  maskField: DescField,
  body: DescField,
  json: JsonValue | undefined,
): void {
  if (json === null || typeof json !== "object" || Array.isArray(json) || body.fieldKind !== "message")
    return;
  const paths: string[] = [];
  const collect = (fields: readonly DescField[], object: { [k: string]: JsonValue }, prefix: string) => {
    for (const [key, value] of Object.entries(object)) {
      const field = fields.find((f) => f.name === key || f.jsonName === key);
      if (!field) continue;
      const path = `${prefix}${field.name}`;
      const nested =
        field.fieldKind === "message" &&
        !field.message.typeName.startsWith("google.protobuf.") &&
        value !== null &&
        typeof value === "object" &&
        !Array.isArray(value) &&
        Object.keys(value).length > 0;
      if (nested) collect(field.message.fields, value, `${path}.`);
      else paths.push(path);
    }
  };
  collect(body.message.fields, json, "");
  target.set(maskField, reflect(FieldMaskSchema, create(FieldMaskSchema, { paths })));
}
