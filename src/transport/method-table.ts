import {
  type DescMethod,
  type DescService,
  getOption,
  hasOption,
  type Message,
  ScalarType,
} from "@bufbuild/protobuf";
import type { RequestContext } from "../core/context.js";
import type { ServiceBinding } from "../core/service.js";
import { isUidp } from "../core/uidp.js";
import { http } from "../gen/google/api/annotations_pb.js";
import { iam } from "../gen/platform/annotations/iam_pb.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { domainForPackage } from "./error-mapping.js";
import { resolveFieldPath, stringGetter } from "./field-path.js";

/** How the pipeline authenticates and authorizes one RPC, read once from its IAM annotation. */
export type MethodAuth =
  | { kind: "disabled" }
  /** Authenticated; the handler filters or checks the scope itself. */
  | { kind: "unscoped"; capabilities: readonly Capability[] }
  /** Authenticated and `access.require(scope value, capabilities)` before the handler. */
  | {
      kind: "scoped";
      capabilities: readonly Capability[];
      /** The scope field's proto path, as named in violations (`repo.uid`). */
      scopeField: string;
      scopeOf: (request: Message) => string;
    };

/** Everything the transports need about one bound RPC, computed once at startup. */
export interface MethodEntry {
  readonly service: DescService;
  readonly method: DescMethod;
  /** `platform.registry.v2.ReposService/GetRepo` (for logs). */
  readonly rpcName: string;
  /** `/platform.registry.v2.ReposService/GetRepo` (the gRPC/Connect path). */
  readonly rpcPath: string;
  /** ErrorInfo.domain for errors of this RPC (`registry.wharf.dev`). */
  readonly domain: string;
  readonly auth: MethodAuth;
  /**
   * Whether calls are audited (ADR 0048): its HTTP binding is not a GET, nor a POST of a read verb
   * (`:query`, `:check`, `:preview`). An RPC without HTTP binding is not.
   */
  readonly mutating: boolean;
  /** The resource a request names (its scope, else its `uid`, `name` or `parent`) and that resource's group. */
  readonly auditTarget: (request: Message) => { resource: string; group: string };
  /** True when the request names an existing resource by a top-level `uid` field (a delete, a custom verb). */
  readonly namesResource: boolean;
  readonly handler: (request: Message, ctx: RequestContext) => Promise<unknown>;
}

/**
 * Flattens bindings into method entries. Fails fast (throws) on a programming error: a method that
 * is not unary, has no handler, has no IAM annotation, is annotated neither `disabled`, `unscoped`
 * nor with a `scope`, or whose scope path does not name a string field of the request. Refusing to
 * start beats serving an RPC without its authorization check.
 */
export function buildMethodTable(bindings: readonly ServiceBinding[]): MethodEntry[] {
  const out: MethodEntry[] = [];
  for (const { service, handlers } of bindings) {
    const impl = handlers as unknown as Record<string, unknown>;
    for (const method of service.methods) {
      const where = `${service.typeName}.${method.name}`;
      const auth = readAuth(method, where);
      if (method.methodKind !== "unary") throw new Error(`${where}: only unary RPCs can be bound`);
      const handler = impl[method.localName];
      if (typeof handler !== "function") throw new Error(`${where}: no handler bound`);
      out.push({
        service,
        method,
        rpcName: `${service.typeName}/${method.name}`,
        rpcPath: `/${service.typeName}/${method.name}`,
        domain: domainForPackage(service.file.proto.package),
        auth,
        mutating: isMutating(method),
        auditTarget: auditTargetOf(method, auth),
        namesResource: method.input.fields.some(
          (f) => f.name === "uid" && f.fieldKind === "scalar" && f.scalar === ScalarType.STRING,
        ),
        handler: (handler as MethodEntry["handler"]).bind(handlers),
      });
    }
  }
  return out;
}

function readAuth(method: DescMethod, where: string): MethodAuth {
  if (!hasOption(method, iam)) throw new Error(`${where}: missing (platform.annotations.iam) option`);
  const option = getOption(method, iam);
  if (option.disabled) return { kind: "disabled" };
  if (option.scope !== "") {
    const fields = resolveFieldPath(method.input, option.scope);
    const leaf = fields[fields.length - 1]!;
    if (leaf.fieldKind !== "scalar" || leaf.scalar !== ScalarType.STRING) {
      throw new Error(`${where}: IAM scope "${option.scope}" is not a string field`);
    }
    return {
      kind: "scoped",
      capabilities: option.capabilities,
      scopeField: fields.map((f) => f.name).join("."),
      scopeOf: stringGetter(fields),
    };
  }
  if (option.unscoped) return { kind: "unscoped", capabilities: option.capabilities };
  throw new Error(`${where}: IAM option is neither disabled, unscoped nor scoped`);
}

/** POST verbs that read (the few non-GET bindings that change nothing). */
const READ_VERBS = /:(query|check|preview)$/;

function isMutating(method: DescMethod): boolean {
  if (!hasOption(method, http)) return false;
  const pattern = getOption(method, http).pattern;
  if (pattern.case === undefined || pattern.case === "get") return false;
  return !(pattern.case === "post" && READ_VERBS.test(pattern.value));
}

/** Top-level request fields naming what a call acts on, in order of preference. */
const TARGET_FIELDS = ["uid", "name", "parent", "group"];

function auditTargetOf(method: DescMethod, auth: MethodAuth): MethodEntry["auditTarget"] {
  let read: ((request: Message) => string) | undefined;
  if (auth.kind === "scoped") read = auth.scopeOf;
  else {
    const field = TARGET_FIELDS.map((name) => method.input.fields.find((f) => f.name === name)).find(
      (f) => f !== undefined && f.fieldKind === "scalar" && f.scalar === ScalarType.STRING,
    );
    if (field) read = stringGetter([field]);
  }
  return (request) => {
    const resource = read?.(request) ?? "";
    return { resource, group: isUidp(resource) ? resource : "" };
  };
}
