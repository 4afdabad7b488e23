import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parseOpenVex, VEX_JUSTIFICATIONS, VexFormatError } from "../../../../src/vulnreports/vex/openvex.js";

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/vex/${name}`, import.meta.url));
const IMAGE = `sha256:${"a".repeat(64)}`;
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

function minimal(statement: Record<string, unknown>): Record<string, unknown> {
  return {
    "@context": "https://openvex.dev/ns/v0.2.0",
    "@id": "https://example.test/vex/1",
    author: "someone",
    timestamp: "2026-11-01T00:00:00Z",
    version: 1,
    statements: [{ vulnerability: { name: "CVE-1" }, products: [{ "@id": IMAGE }], ...statement }],
  };
}

function refused(value: unknown, message: RegExp): void {
  assert.throws(
    () => parseOpenVex(typeof value === "string" ? Buffer.from(value) : bytes(value)),
    (err: unknown) => err instanceof VexFormatError && message.test(err.message),
  );
}

describe("OpenVEX parser", () => {
  it("reads the spec's v0.2.0 document shape, cascading the document timestamp", () => {
    const doc = parseOpenVex(fixture("openvex-not-affected.json"));
    assert.equal(doc.id, "https://openvex.dev/docs/example/vex-9fb3463de1b57");
    assert.equal(doc.author, "Wolfi J Inkinson <security@example.test>");
    assert.equal(doc.envelope, "bare");
    assert.equal(doc.issueTime, Date.parse("2026-11-03T00:02:03.647Z"));
    const [first, second] = doc.statements;
    assert.deepEqual(first, {
      vulnerability: "CVE-2026-10003",
      aliases: [],
      status: "not_affected",
      justification: "vulnerable_code_not_in_execute_path",
      impactStatement: "The service never logs user input through logkit's lookup formatter.",
      actionStatement: "",
      effectiveTime: doc.issueTime,
      products: [
        {
          id: `pkg:oci/app@sha256%3A${"a".repeat(64)}?repository_url=registry.example.test%2Facme%2Fapp`,
          purl: "",
          sha256: "",
          subcomponents: ["pkg:maven/test.example/logkit@1.2.0"],
        },
      ],
    });
    assert.equal(second?.status, "fixed");
    assert.deepEqual(second?.aliases, ["CGA-2x3f-7c9q-m4hw"]);
    assert.equal(second?.effectiveTime, Date.parse("2026-11-03T09:00:00Z"), "the statement's own timestamp");
  });

  it("reads each status and every justification label", () => {
    for (const status of ["fixed", "under_investigation"]) {
      assert.equal(parseOpenVex(bytes(minimal({ status }))).statements[0]?.status, status);
    }
    assert.equal(
      parseOpenVex(bytes(minimal({ status: "affected", action_statement: "upgrade" }))).statements[0]
        ?.actionStatement,
      "upgrade",
    );
    for (const justification of VEX_JUSTIFICATIONS) {
      const doc = parseOpenVex(bytes(minimal({ status: "not_affected", justification })));
      assert.equal(doc.statements[0]?.justification, justification);
    }
    const impactOnly = parseOpenVex(
      bytes(minimal({ status: "not_affected", impact_statement: "never loaded" })),
    );
    assert.equal(impactOnly.statements[0]?.impactStatement, "never loaded");
  });

  it("reads products given by identifiers.purl or hashes, and the pre-0.2 string forms", () => {
    const doc = parseOpenVex(
      bytes(
        minimal({
          status: "fixed",
          products: [{ identifiers: { purl: "pkg:oci/app@sha256%3Aabc" } }, { hashes: { "sha-256": "ABC" } }],
        }),
      ),
    );
    assert.deepEqual(
      doc.statements[0]?.products.map((p) => [p.id, p.purl, p.sha256]),
      [
        ["", "pkg:oci/app@sha256%3Aabc", ""],
        ["", "", "abc"],
      ],
    );
    const old = parseOpenVex(
      bytes({
        ...minimal({}),
        "@context": "https://openvex.dev/ns",
        statements: [{ vulnerability: "CVE-9", products: [IMAGE], status: "fixed" }],
      }),
    );
    assert.deepEqual(
      old.statements.map((s) => [s.vulnerability, s.products[0]?.id]),
      [["CVE-9", IMAGE]],
    );
  });

  it("unwraps an in-toto statement (cosign attest --type openvex) and a DSSE envelope of one", () => {
    const statement = fixture("openvex-in-toto.json");
    const inToto = parseOpenVex(statement);
    assert.equal(inToto.envelope, "in-toto-statement");
    assert.equal(inToto.statements[0]?.vulnerability, "CVE-2026-10004");
    const envelope = {
      payloadType: "application/vnd.in-toto+json",
      payload: statement.toString("base64"),
      signatures: [],
    };
    assert.equal(parseOpenVex(bytes(envelope)).envelope, "dsse-envelope");
    assert.equal(parseOpenVex(bytes({ mediaType: "x", dsseEnvelope: envelope })).envelope, "dsse-envelope");
    refused({ ...envelope, payloadType: "text/plain" }, /payloadType .*application\/vnd.in-toto\+json/);
    refused(
      { ...JSON.parse(statement.toString()), predicateType: "https://slsa.dev/provenance/v1" },
      /predicateType .*slsa.*expected https:\/\/openvex.dev\/ns/,
    );
    refused(
      {
        payloadType: "application/vnd.in-toto+json",
        payload: Buffer.from(JSON.stringify(minimal({ status: "fixed" }))).toString("base64"),
      },
      /in-toto statement/,
    );
  });

  it("refuses bad documents with a message naming the field", () => {
    refused("{not json", /not UTF-8 JSON/);
    refused("[]", /must be an object/);
    refused(
      { ...minimal({ status: "fixed" }), "@context": "https://example.test/ns" },
      /@context .*openvex.dev/,
    );
    refused({ ...minimal({ status: "fixed" }), "@id": undefined }, /@id must be a non-empty string/);
    refused({ ...minimal({ status: "fixed" }), author: 7 }, /author must be/);
    refused({ ...minimal({ status: "fixed" }), timestamp: "yesterday" }, /timestamp must be an RFC 3339/);
    refused({ ...minimal({ status: "fixed" }), statements: [] }, /statements must be a non-empty array/);
    refused(minimal({ status: "maybe" }), /statements\[0\].status is "maybe"; expected one of not_affected/);
    refused(
      minimal({ status: "not_affected" }),
      /statements\[0\] says not_affected, so it needs a justification/,
    );
    refused(minimal({ status: "not_affected", justification: "trust_me" }), /justification is "trust_me"/);
    refused(minimal({ status: "affected" }), /needs an action_statement/);
    refused(minimal({ status: "fixed", vulnerability: { aliases: ["x"] } }), /vulnerability.name must be/);
    refused(minimal({ status: "fixed", products: [] }), /products must list/);
    refused(minimal({ status: "fixed", products: [{ subcomponents: [] }] }), /products\[0\] needs an @id/);
    refused(
      minimal({ status: "fixed", timestamp: "2026-13-45" }),
      /statements\[0\].timestamp must be an RFC 3339/,
    );
  });

  it("refuses a document over the size cap before parsing it", () => {
    const big = Buffer.from(JSON.stringify(minimal({ status: "fixed", impact_statement: "x".repeat(2000) })));
    assert.throws(() => parseOpenVex(big, 1024), /larger than 1024 bytes/);
  });
});
