import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/** The committed OpenAPI document (src/gen/openapi.json), parsed. */
export function loadOpenApiDocument(): OpenApiDoc {
  return JSON.parse(
    readFileSync(new URL("../../src/gen/openapi.json", import.meta.url), "utf8"),
  ) as OpenApiDoc;
}

/** The parts of an OpenAPI document the tests read. */
export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown> };
  [key: string]: unknown;
}

/** One operation of an {@link OpenApiDoc}. */
export interface OpenApiOperation {
  operationId: string;
  parameters?: Array<{
    name: string;
    in: string;
    required?: boolean;
    schema: unknown;
    "x-wharf-field"?: string;
  }>;
  requestBody?: { required: boolean; content: { "application/json": { schema: unknown } } };
  responses: Record<string, { content: { "application/json": { schema: unknown } } }>;
  security?: unknown[];
  "x-wharf-capabilities"?: string[];
}

const DOC_ID = "https://wharf.test/openapi.json";

/**
 * Validates JSON values against schemas of `doc` with ajv's draft 2020-12 validator (OpenAPI 3.1's
 * dialect), `$ref`s resolved inside the document. Returns ajv's errors as text, or "" when valid.
 */
export function createDocValidator(doc: OpenApiDoc): (schema: unknown, value: unknown) => string {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat("uint32", true);
  ajv.addFormat("uint64", true);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return (schema, value) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile({ $id: `${DOC_ID}/check/${compiled.size}`, ...absolute(schema) });
      compiled.set(key, validate);
    }
    return validate(value) ? "" : ajv.errorsText(validate.errors, { separator: "\n" });
  };
}

/** Rewrites the document-relative `$ref`s of a schema taken out of it to absolute ones. */
function absolute(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${DOC_ID}#/`)) as Record<
    string,
    unknown
  >;
}
