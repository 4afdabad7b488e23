import type { ServerResponse } from "node:http";
import type { Principal } from "../core/context.js";
import { invalidArgument, isDomainError } from "../core/errors.js";
import type { ExtraRoute } from "./create-api-handler.js";
import { methodNotAllowed, toDomainError } from "./error-mapping.js";
import { type AnyRequest, type AnyResponse, sendError, sendJson } from "./http-response.js";
import { readBody } from "./json-body.js";
import { bearerToken } from "./pipeline.js";

// Plain HTTP routes of the API port that are not RPCs (the STS, login, registration): one way to
// read their parameters, authenticate their caller and answer their errors, in the same
// google.rpc.Status JSON as the REST API.

/** Largest body a plain route reads: forms and small JSON documents only. */
export const PLAIN_ROUTE_MAX_BODY = 64 * 1024;

/** The parameters of a request: query string and form or JSON body, merged (body after query). */
export class RouteParams {
  constructor(private readonly values: ReadonlyMap<string, readonly string[]>) {}

  /** The last value of `name`, or "" when absent. */
  get(name: string): string {
    const all = this.values.get(name);
    return all?.[all.length - 1] ?? "";
  }

  /** Every value of `name`, comma-joined lists split (`aud=a,b&aud=c` → a, b, c), empties dropped. */
  all(name: string): string[] {
    return (this.values.get(name) ?? []).flatMap((v) => v.split(",")).filter((v) => v !== "");
  }
}

/** What a plain route's handler gets. */
export interface PlainRouteCall {
  req: AnyRequest;
  res: AnyResponse;
  params: RouteParams;
}

/** A handler's answer: a JSON body (status 200 unless given), or a redirect. */
export type PlainRouteResult =
  | { status?: number; body: unknown; headers?: Record<string, string> }
  | { redirect: string };

/**
 * Builds an ExtraRoute serving `path` for `methods`: reads the parameters (query string, plus an
 * `application/x-www-form-urlencoded` or JSON-object body of at most 64 KiB), calls `handle`, and
 * writes its result as JSON (`cache-control: no-store`, since these answers carry tokens) or a 302.
 * Anything thrown is answered as google.rpc.Status JSON with ErrorInfo domain `domain`
 * (non-DomainErrors become a bare INTERNAL, never their message). Other methods get 405.
 */
export function plainRoute(
  path: string,
  methods: readonly ("GET" | "POST")[],
  domain: string,
  handle: (call: PlainRouteCall) => Promise<PlainRouteResult>,
): ExtraRoute {
  return {
    path,
    async handler(req, res) {
      try {
        const method = req.method ?? "GET";
        if (!(methods as readonly string[]).includes(method)) {
          throw methodNotAllowed(method, path, methods);
        }
        const params = await readParams(req);
        const result = await handle({ req, res, params });
        if ("redirect" in result) {
          (res as ServerResponse).writeHead(302, {
            location: result.redirect,
            "cache-control": "no-store",
          });
          res.end();
          return;
        }
        sendJson(res, result.status ?? 200, JSON.stringify(result.body), {
          "cache-control": "no-store",
          ...result.headers,
        });
      } catch (err) {
        sendError(req, res, toDomainError(err), domain, { "cache-control": "no-store" });
        if (!isDomainError(err)) throw err; // the pipeline logs the cause
      }
    },
  };
}

/** Verifies the request's `Authorization: Bearer` token; UNAUTHENTICATED when missing or invalid. */
export async function authenticateBearer(
  req: AnyRequest,
  verifier: { authenticate(token: string): Promise<Principal> },
): Promise<Principal> {
  const header = req.headers.authorization;
  return verifier.authenticate(bearerToken(Array.isArray(header) ? header[0] : header));
}

async function readParams(req: AnyRequest): Promise<RouteParams> {
  const values = new Map<string, string[]>();
  const add = (name: string, value: string) => {
    const list = values.get(name);
    if (list) list.push(value);
    else values.set(name, [value]);
  };
  const url = new URL(req.url ?? "/", "http://localhost");
  for (const [name, value] of url.searchParams) add(name, value);
  if (req.method !== "POST") return new RouteParams(values);

  const body = await readBody(req, PLAIN_ROUTE_MAX_BODY);
  if (body.length === 0) return new RouteParams(values);
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  if (type === "application/x-www-form-urlencoded") {
    for (const [name, value] of new URLSearchParams(body.toString("utf8"))) add(name, value);
  } else if (type === "application/json" || type === "") {
    for (const [name, value] of Object.entries(jsonObject(body.toString("utf8")))) {
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
          throw invalidArgument(name, "must be a string, number, boolean or a list of them");
        }
        add(name, String(v));
      }
    }
  } else {
    throw invalidArgument("body", `unsupported content type ${type}: use a form or JSON`);
  }
  return new RouteParams(values);
}

function jsonObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidArgument("body", "is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalidArgument("body", "must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}
