/*
 * The OSV JSON Schema, vendored from ossf/osv-schema `validation/schema.json`
 * (commit 015b00aaa9b14c43a8e13c40f21f41d6c6a3f303), Copyright the OSV schema authors,
 * licensed under the Apache License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0).
 *
 * Local amendments, following docs/schema.md up to 1.7 (that commit predates them): severity types
 * CVSS_V4 and Ubuntu, reference type DISCUSSION, and the `upstream` id list. The `$id` is dropped
 * (Ajv compiles it once, in process).
 */

const severity = {
  type: ["array", "null"],
  items: {
    type: "object",
    properties: {
      type: { type: "string", enum: ["CVSS_V2", "CVSS_V3", "CVSS_V4", "Ubuntu"] },
      score: { type: "string" },
    },
    required: ["type", "score"],
  },
} as const;

const rangeEvent = (name: string) =>
  ({ type: "object", properties: { [name]: { type: "string" } }, required: [name] }) as const;

/** The OSV record schema (draft 2020-12), for Ajv. */
export const OSV_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Open Source Vulnerability",
  description: "A schema for describing a vulnerability in an open source package.",
  type: "object",
  properties: {
    schema_version: { type: "string" },
    id: { type: "string" },
    modified: { type: "string", format: "date-time" },
    published: { type: "string", format: "date-time" },
    withdrawn: { type: "string", format: "date-time" },
    aliases: { type: ["array", "null"], items: { type: "string" } },
    upstream: { type: ["array", "null"], items: { type: "string" } },
    related: {
      type: "array",
      anyOf: [
        { items: { type: "string" } },
        {
          items: {
            type: "object",
            properties: {
              type: {
                type: "string",
                enum: [
                  "CAUSES",
                  "CAUSED_BY",
                  "DUPLICATE_OF",
                  "DUPLICATED_BY",
                  "INSPIRES",
                  "INSPIRED_BY",
                  "INSUFFICIENT_FIX_OF",
                  "SIMILAR_TO",
                ],
              },
              id: { type: "string" },
            },
            required: ["type", "id"],
          },
        },
      ],
    },
    summary: { type: "string" },
    details: { type: "string" },
    severity,
    affected: {
      type: ["array", "null"],
      items: {
        type: "object",
        properties: {
          package: {
            type: "object",
            properties: { ecosystem: { type: "string" }, name: { type: "string" }, purl: { type: "string" } },
            required: ["ecosystem", "name"],
          },
          severity,
          ranges: {
            type: "array",
            items: {
              type: "object",
              properties: {
                type: { type: "string", enum: ["GIT", "SEMVER", "ECOSYSTEM"] },
                repo: { type: "string" },
                events: {
                  type: "array",
                  contains: { required: ["introduced"] },
                  items: {
                    type: "object",
                    oneOf: [
                      rangeEvent("introduced"),
                      rangeEvent("fixed"),
                      rangeEvent("last_affected"),
                      rangeEvent("limit"),
                    ],
                  },
                  minItems: 1,
                },
                database_specific: { type: "object" },
              },
              allOf: [
                // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword
                { if: { properties: { type: { const: "GIT" } } }, then: { required: ["repo"] } },
                {
                  if: { properties: { events: { contains: { required: ["last_affected"] } } } },
                  // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword
                  then: { not: { properties: { events: { contains: { required: ["fixed"] } } } } },
                },
              ],
              required: ["type", "events"],
            },
          },
          versions: { type: "array", items: { type: "string" } },
          ecosystem_specific: { type: "object" },
          database_specific: { type: "object" },
        },
      },
    },
    references: {
      type: ["array", "null"],
      items: {
        type: "object",
        properties: {
          type: {
            type: "string",
            enum: [
              "ADVISORY",
              "ARTICLE",
              "DETECTION",
              "DISCUSSION",
              "REPORT",
              "FIX",
              "INTRODUCED",
              "GIT",
              "PACKAGE",
              "EVIDENCE",
              "WEB",
            ],
          },
          url: { type: "string", format: "uri" },
        },
        required: ["type", "url"],
      },
    },
    credits: {
      type: "array",
      items: {
        type: "object",
        properties: {
          name: { type: "string" },
          contact: { type: "array", items: { type: "string" } },
          type: {
            type: "string",
            enum: [
              "FINDER",
              "REPORTER",
              "ANALYST",
              "COORDINATOR",
              "REMEDIATION_DEVELOPER",
              "REMEDIATION_REVIEWER",
              "REMEDIATION_VERIFIER",
              "TOOL",
              "SPONSOR",
              "OTHER",
            ],
          },
        },
        required: ["name"],
      },
    },
    database_specific: { type: "object" },
  },
  required: ["id", "modified"],
} as const;
