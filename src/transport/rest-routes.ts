import { type DescField, type DescMessage, getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../gen/google/api/http_pb.js";
import { resolveFieldPath } from "./field-path.js";
import { type LeafDecoder, leafDecoderFor } from "./field-values.js";
import type { MethodEntry } from "./method-table.js";
import { parsePathTemplate } from "./path-template.js";
import { compileQueryFields, type QueryFieldMap } from "./query-params.js";
import type { RouteEntry } from "./route-table.js";

/** One path variable of a REST route: the field it sets and how to read its text. */
export interface RestVariable {
  /** The field path as written in the template (`repo.uid`), used in violations. */
  readonly name: string;
  readonly fields: readonly DescField[];
  readonly decode: LeafDecoder;
}

/** Everything the transcoder needs for one HTTP binding of an RPC, computed once. */
export interface RestRoute {
  readonly entry: MethodEntry;
  /** In template variable order. */
  readonly variables: readonly RestVariable[];
  /** The HttpRule `body`: a request field, `"*"`, or undefined (no body). */
  readonly body: DescField | "*" | undefined;
  /** Fields settable by query parameters; empty when the body is `"*"`. */
  readonly query: QueryFieldMap;
  /**
   * The request's `google.protobuf.FieldMask update_mask`, when the body is one message field:
   * without a mask in the query it is set from the body's top-level keys.
   */
  readonly updateMask: DescField | undefined;
}

/**
 * Builds REST routes from the `google.api.http` annotations of `entries` (the binding and its
 * `additional_bindings`); methods without the annotation are not exposed over REST. Throws at
 * startup on an invalid template, a variable or body naming no field, or `response_body` (not
 * supported).
 */
export function buildRestRoutes(entries: readonly MethodEntry[]): RouteEntry<RestRoute>[] {
  const out: RouteEntry<RestRoute>[] = [];
  for (const entry of entries) {
    if (!hasOption(entry.method, http)) continue;
    const rule = getOption(entry.method, http);
    for (const binding of [rule, ...rule.additionalBindings]) {
      out.push(compileBinding(entry, binding));
    }
  }
  return out;
}

function compileBinding(entry: MethodEntry, rule: HttpRule): RouteEntry<RestRoute> {
  const where = `${entry.rpcName} (google.api.http)`;
  const pattern = rule.pattern;
  let httpMethod: string;
  let path: string;
  switch (pattern.case) {
    case "get":
    case "put":
    case "post":
    case "delete":
    case "patch":
      httpMethod = pattern.case.toUpperCase();
      path = pattern.value;
      break;
    case "custom":
      httpMethod = pattern.value.kind.toUpperCase();
      path = pattern.value.path;
      break;
    default:
      throw new Error(`${where}: no pattern`);
  }
  if (rule.responseBody !== "") throw new Error(`${where}: response_body is not supported`);
  const input = entry.method.input;
  const template = parsePathTemplate(path);
  const variables = template.variables.map((name): RestVariable => {
    const fields = resolveFieldPath(input, name);
    const leaf = fields[fields.length - 1]!;
    const decode = leaf.fieldKind === "list" ? undefined : leafDecoderFor(leaf);
    if (!decode) throw new Error(`${where}: path variable ${name} is not a singular scalar field`);
    return { name, fields, decode };
  });
  const body = rule.body === "" ? undefined : rule.body === "*" ? "*" : resolveFieldPath(input, rule.body)[0];
  if (rule.body.includes(".")) throw new Error(`${where}: body must name a top-level field`);
  const bound = [
    ...variables.map((v) => v.fields.map((f) => f.name).join(".")),
    ...(body && body !== "*" ? [body.name] : []),
  ];
  const query =
    body === "*"
      ? new Map()
      : compileQueryFields(input, (p) => bound.some((b) => p === b || p.startsWith(`${b}.`)));
  return {
    httpMethod,
    template,
    value: { entry, variables, body, query, updateMask: updateMaskOf(input, body) },
  };
}

function updateMaskOf(input: DescMessage, body: DescField | "*" | undefined): DescField | undefined {
  if (body === undefined || body === "*" || body.fieldKind !== "message") return undefined;
  const mask = input.fields.find((f) => f.name === "update_mask");
  return mask?.fieldKind === "message" && mask.message.typeName === "google.protobuf.FieldMask"
    ? mask
    : undefined;
}
