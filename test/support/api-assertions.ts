import assert from "node:assert/strict";

/** A decoded google.rpc.Status JSON body. */
export interface StatusBody {
  code: number;
  message: string;
  details: Array<Record<string, unknown> & { "@type": string }>;
}

/** Reads a JSON body, asserting the HTTP status first (the body is shown when it differs). */
export async function expectJson<T = Record<string, unknown>>(res: Response, status = 200): Promise<T> {
  const text = await res.text();
  assert.equal(res.status, status, `expected HTTP ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** The detail of a Status whose @type ends with `.${name}`. */
export function detail(body: StatusBody, name: string): Record<string, unknown> | undefined {
  return body.details.find((d) => d["@type"] === `type.googleapis.com/google.rpc.${name}`);
}

/**
 * Asserts an error response: HTTP status, gRPC code, ErrorInfo present with `reason`, and (when
 * `field` is given) a BadRequest violation naming it.
 */
export async function expectError(
  res: Response,
  expected: { status: number; code: number; reason?: string; field?: string; domain?: string },
): Promise<StatusBody> {
  const body = await expectJson<StatusBody>(res, expected.status);
  assert.equal(body.code, expected.code, `code in ${JSON.stringify(body)}`);
  const info = detail(body, "ErrorInfo");
  assert.ok(info, `ErrorInfo missing in ${JSON.stringify(body)}`);
  if (expected.reason) assert.equal(info.reason, expected.reason);
  if (expected.domain) assert.equal(info.domain, expected.domain);
  if (expected.field !== undefined) {
    const bad = detail(body, "BadRequest") as { fieldViolations?: Array<{ field: string }> } | undefined;
    assert.ok(
      bad?.fieldViolations?.some((v) => v.field === expected.field),
      `no BadRequest violation on "${expected.field}" in ${JSON.stringify(body)}`,
    );
  }
  return body;
}
