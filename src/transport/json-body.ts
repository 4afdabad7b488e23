import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import {
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
  mergeFromJson,
  type Registry,
} from "@bufbuild/protobuf";
import { hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { DomainError, type FieldViolation, invalidArgument } from "../core/errors.js";
import { bodyTooLarge } from "./error-mapping.js";
import { jsonErrorDescription } from "./field-values.js";

/**
 * Reads a request body of at most `limit` bytes. Rejects with RESOURCE_EXHAUSTED (`bodyTooLarge`)
 * as soon as the declared or received length exceeds it (the rest of the body is then discarded,
 * not buffered), and with CANCELLED when the client goes away before the body is complete.
 */
export function readBody(req: IncomingMessage | Http2ServerRequest, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (declared > limit) {
    req.resume();
    return Promise.reject(bodyTooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onAbort = (): void => {
      cleanup();
      reject(new DomainError(Code.Canceled, "Cancelled: the request body was not received completely"));
    };
    const cleanup = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onAbort);
      req.off("close", onAbort);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onAbort);
    req.on("close", onAbort);
  });
}

/** Parses body text as JSON; an empty body is `{}`. Malformed JSON is INVALID_ARGUMENT on field `body`. */
export function parseJson(text: string): JsonValue {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch (err) {
    throw invalidArgument("body", `malformed JSON: ${(err as Error).message}`);
  }
}

/**
 * Decodes a JSON body into `target` per an HttpRule `body`: `"*"` → the whole request message,
 * a field → that field. Unknown fields are rejected. On failure throws INVALID_ARGUMENT with a
 * BadRequest violation naming the offending field by its path in the body as the client wrote it
 * (`name`, `claimMatch.issuer`, `requests[2].roleUid`; `body` when the body itself is wrong).
 * Returns the message decoded (a new one for `"*"`, else `target`).
 */
export function decodeJsonBody(
  input: DescMessage,
  bodyField: DescField | "*",
  json: JsonValue,
  target: Message,
  registry: Registry,
): Message {
  const options = { registry };
  try {
    if (bodyField === "*") return fromJson(input, json, options);
    return mergeFromJson(input, target, { [bodyField.name]: json }, options);
  } catch (err) {
    const violation =
      bodyField === "*"
        ? locate(input, json, "", registry)
        : bodyField.fieldKind === "message"
          ? locate(bodyField.message, json, "", registry)
          : undefined;
    const v = violation ?? { field: "body", description: jsonErrorDescription(err) };
    throw invalidArgument(v.field, v.description);
  }
}

/** Finds the first problem of `json` as a `desc` message; only called after a decode failed. */
function locate(
  desc: DescMessage,
  json: JsonValue,
  path: string,
  registry: Registry,
): FieldViolation | undefined {
  const here = path === "" ? "body" : path;
  if (hasCustomJsonRepresentation(desc)) {
    try {
      fromJson(desc, json, { registry });
      return undefined;
    } catch (err) {
      return { field: here, description: jsonErrorDescription(err) };
    }
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return { field: here, description: `expected a JSON object for ${desc.typeName}` };
  }
  for (const [key, value] of Object.entries(json)) {
    const at = path === "" ? key : `${path}.${key}`;
    const field = desc.fields.find((f) => f.name === key || f.jsonName === key);
    if (!field) return { field: at, description: "unknown field" };
    if (value === null) continue;
    let found: FieldViolation | undefined;
    if (field.fieldKind === "message") {
      found = locate(field.message, value, at, registry);
    } else if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      for (let i = 0; i < value.length && !found; i++)
        found = locate(field.message, value[i]!, `${at}[${i}]`, registry);
    } else if (field.fieldKind === "map" && field.mapKind === "message" && isObject(value)) {
      for (const [k, v] of Object.entries(value)) {
        found ??= locate(field.message, v, `${at}.${k}`, registry);
      }
    } else {
      try {
        fromJson(desc, { [key]: value }, { registry });
      } catch (err) {
        found = { field: at, description: jsonErrorDescription(err) };
      }
    }
    if (found) return found;
  }
  return undefined;
}

function isObject(value: JsonValue): value is { [k: string]: JsonValue } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
