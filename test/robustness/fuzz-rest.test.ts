import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type DescMessage, type DescService, getOption, hasOption } from "@bufbuild/protobuf";
import fc from "fast-check";
import { http } from "../../src/gen/google/api/annotations_pb.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";
import {
  anyText,
  assertApiAnswer,
  assertNoServerFaultLogged,
  fuzzParameters,
  percentEncode,
  percentEncodeText,
  type RawRequest,
  rawRequest,
  StatusTally,
} from "./robustness-support.js";

// Property: whatever path values, query parameters and JSON bodies a client sends to any REST
// route of the platform API, the answer is never a 5xx and every error is google.rpc.Status JSON.
// The routes are read from the generated descriptors' google.api.http annotations, so a new RPC is
// fuzzed without touching this file.

/** One HTTP binding of an RPC as its annotation declares it. */
interface RestBinding {
  rpc: string;
  httpMethod: string;
  template: string;
  hasBody: boolean;
  /** Query parameter names the request message could take (`page_size`, `uidp.descendants_of`…). */
  fieldNames: string[];
  /** Top-level JSON names of the request message (body keys). */
  bodyKeys: string[];
}

async function platformServices(): Promise<DescService[]> {
  const root = new URL("../../src/gen/platform/", import.meta.url);
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith("_pb.ts"));
  const services: DescService[] = [];
  for (const file of files) {
    const module = (await import(new URL(file, root).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if ((value as { kind?: unknown })?.kind === "service") services.push(value as DescService);
    }
  }
  return services;
}

/** Field paths of `message` up to two levels deep, as query parameters name them. */
function fieldPaths(message: DescMessage, depth = 0): string[] {
  return message.fields.flatMap((field) => {
    const nested =
      field.fieldKind === "message" && depth < 1
        ? fieldPaths(field.message, depth + 1).map((p) => `${field.name}.${p}`)
        : [];
    return [field.name, field.jsonName, ...nested];
  });
}

function restBindings(services: readonly DescService[]): RestBinding[] {
  const out: RestBinding[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!hasOption(method, http)) continue;
      const rule = getOption(method, http);
      for (const binding of [rule, ...rule.additionalBindings]) {
        const pattern = binding.pattern;
        if (pattern.case === undefined) continue;
        const [httpMethod, template] =
          pattern.case === "custom"
            ? [pattern.value.kind.toUpperCase(), pattern.value.path]
            : [pattern.case.toUpperCase(), pattern.value];
        out.push({
          rpc: `${service.typeName}/${method.name}`,
          httpMethod,
          template,
          hasBody: binding.body !== "",
          fieldNames: [...new Set(fieldPaths(method.input))],
          bodyKeys: method.input.fields.flatMap((f) => [f.jsonName, f.name]),
        });
      }
    }
  }
  return out;
}

const utf8 = percentEncodeText;

/** Printable ASCII a request line may carry raw (no space, `?`, `#` or `/`). */
const rawChar = fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@%[]{}|\\^`\"<>".split(""));

const hex = (length: number) =>
  fc.uint8Array({ minLength: length, maxLength: length }).map((b) => Buffer.from(b).toString("hex"));

/** A syntactically valid uidp, of nothing that exists. */
const uidLike = fc
  .tuple(hex(20), fc.array(hex(8), { maxLength: 2 }))
  .map(([root, children]) => [root, ...children].join("/"));

/** Text for one path segment (or, with `slashes`, several), as it appears on the wire. */
function segmentText(known: readonly string[], slashes: boolean): fc.Arbitrary<string> {
  // Real and well-formed uids weigh most, so requests also get past validation into the services.
  const piece = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known) },
    { weight: 3, arbitrary: uidLike.map((uid) => (slashes ? uid : uid.slice(0, 40))) },
    anyText(24).map(utf8),
    fc.uint8Array({ maxLength: 12 }).map(percentEncode),
    fc.array(rawChar, { maxLength: 16 }).map((chars) => chars.join("")),
    fc.constantFrom(
      "",
      ".",
      "..",
      "%",
      "%z",
      "%zz",
      "%e0%a0",
      "%c0%af",
      "%ff",
      "%00",
      "%2",
      "%%",
      "%2F",
      "%2e%2e",
    ),
    fc.integer({ min: 1, max: 5000 }).map((n) => "a".repeat(n)),
  );
  const separator = slashes ? fc.constantFrom("", "/") : fc.constant("");
  const joined = fc
    .array(fc.tuple(separator, piece), { minLength: 2, maxLength: 3 })
    .map((parts) => parts.map(([sep, text], i) => (i === 0 ? text : sep + text)).join(""));
  return fc.oneof({ weight: 3, arbitrary: piece }, { weight: 1, arbitrary: joined });
}

/** Replaces each `{field=…}` of a template with generated text. */
function pathFor(binding: RestBinding, known: readonly string[]): fc.Arbitrary<string> {
  const variables = [...binding.template.matchAll(/\{([^}=]+)(?:=([^}]*))?\}/g)];
  if (variables.length === 0) return fc.constant(binding.template);
  return fc.tuple(...variables.map((v) => segmentText(known, (v[2] ?? "").includes("**")))).map((values) => {
    let i = 0;
    return binding.template.replace(/\{[^}]*\}/g, () => values[i++] as string);
  });
}

const numberish = fc.constantFrom(
  "0",
  "-1",
  "1",
  "200",
  "201",
  "2147483648",
  "-2147483649",
  "9007199254740993",
  "18446744073709551616",
  "1e999",
  "1.5",
  "NaN",
  "Infinity",
  "0x10",
  " 5",
  "true",
  "",
);

function queryFor(binding: RestBinding, known: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...binding.fieldNames, "page_size", "order_by", "update_mask") },
    fc.constantFrom("uidp.descendants_of", "uidp.children_of", "uidp", "uidp.", ".", "$alt", "fields"),
    anyText(12).map(utf8),
  );
  const value = fc.oneof(
    { weight: 2, arbitrary: numberish.map(utf8) },
    { weight: 2, arbitrary: fc.constantFrom(...known) },
    fc
      .constantFrom(
        "name",
        "name desc",
        "name sideways",
        "create_time asc, name",
        "*",
        "a.b.c",
        "name,description",
      )
      .map(utf8),
    anyText(40).map(utf8),
    fc.constantFrom("%", "%zz", "%ff%fe", "%00", "+", "%2B"),
    fc.base64String({ maxLength: 80 }).map(encodeURIComponent),
  );
  const pair = fc.oneof(
    fc.tuple(key, value).map(([k, v]) => `${k}=${v}`),
    key,
    fc.tuple(key, value, value).map(([k, a, b]) => `${k}=${a}&${k}=${b}`),
  );
  return fc.oneof(
    fc.constant(""),
    fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join("&")}`),
  );
}

/** A JSON value of any shape, with the numbers JSON.parse struggles to represent. */
const junkJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(1e308, -0, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, -(2 ** 31) - 1, 4294967296),
);

function bodyFor(binding: RestBinding, known: readonly string[]): fc.Arbitrary<Buffer | undefined> {
  const keys = [...binding.bodyKeys, "name", "uid"];
  const key = fc.oneof(fc.constantFrom(...keys, "@type"), anyText(8));
  const value = fc.oneof(junkJson, fc.constantFrom(...known), fc.dictionary(anyText(6), junkJson));
  const object = fc.dictionary(key, value, { maxKeys: 5 });
  const text = fc.oneof(
    object.map((o) => JSON.stringify(o)),
    junkJson.map((v) => JSON.stringify(v) ?? "null"),
    // Truncated JSON.
    fc.tuple(object, fc.nat()).map(([o, cut]) => {
      const s = JSON.stringify(o);
      return s.slice(0, cut % Math.max(s.length, 1));
    }),
    // Numbers beyond every integer and float type, spelled out.
    fc.constantFrom(...keys, "pageSize").map((k) => `{"${k}": 1e99999}`),
    fc.constantFrom(...keys).map((k) => `{"${k}": 123456789012345678901234567890}`),
    fc.integer({ min: 1, max: 20_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
    fc.integer({ min: 1, max: 5_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
  );
  return fc.oneof(
    { weight: 8, arbitrary: text.map((t) => Buffer.from(t, "utf8")) },
    // Invalid UTF-8 inside a string value.
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...keys), fc.uint8Array({ minLength: 1, maxLength: 8 }))
        .map(([k, bad]) =>
          Buffer.concat([Buffer.from(`{"${k}":"`), Buffer.from(bad.map((b) => b | 0x80)), Buffer.from('"}')]),
        ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

describe("fuzz: REST transcoder (every google.api.http route)", () => {
  let wharf: TestServer;
  let bindings: RestBinding[];
  let known: string[];

  before(async () => {
    wharf = await startTestServer();
    bindings = restBindings(await platformServices());
    const org = await wharf.create("/iam/v2/groups", { name: "acme" });
    const repo = await wharf.create(`/registry/v2/repos/${org}`, { name: "app" });
    known = [org, repo, `${org}/0123456789abcdef`];
  });
  after(() => wharf.close());

  it("reads the routes of every service from the descriptors", () => {
    const services = new Set(bindings.map((b) => b.rpc.split("/")[0]));
    for (const name of [
      "platform.iam.v2.GroupsService",
      "platform.registry.v2.ReposService",
      "platform.events.v2.SubscriptionsService",
      "platform.ping.v2.PingService",
    ]) {
      assert.ok(services.has(name), `${name} has no REST route`);
    }
    assert.ok(bindings.length >= 40, `only ${bindings.length} REST routes found`);
  });

  it("never answers a 5xx and every error is a google.rpc.Status", async (t) => {
    const tally = new StatusTally();
    // One arbitrary per route, built once (chain would rebuild them for every run).
    const perRoute = bindings.map((binding) =>
      fc.record({
        binding: fc.constant(binding),
        method: fc.oneof(
          { weight: 9, arbitrary: fc.constant(binding.httpMethod) },
          {
            weight: 1,
            arbitrary: fc.constantFrom("GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"),
          },
        ),
        path: pathFor(binding, known),
        query: queryFor(binding, known),
        body: binding.hasBody
          ? bodyFor(binding, known)
          : fc.option(bodyFor(binding, known), { freq: 5, nil: undefined }),
        contentType: fc.constantFrom(
          "application/json",
          "application/json",
          "application/json; charset=utf-8",
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/json; charset=latin1",
          undefined,
        ),
        auth: fc.constantFrom("admin", "admin", "admin", "admin", "none", "garbage"),
      }),
    );
    const request = fc.oneof(...perRoute);
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const headers: Record<string, string> = {};
        if (input.auth === "admin") headers.authorization = `Bearer ${wharf.adminToken}`;
        if (input.auth === "garbage") headers.authorization = "Bearer e30.e30.e30";
        if (input.body !== undefined && input.contentType !== undefined)
          headers["content-type"] = input.contentType;
        const req: RawRequest = {
          method: input.method,
          path: input.path + input.query,
          headers,
          ...(input.body === undefined ? {} : { body: input.body }),
        };
        const res = await rawRequest(wharf.apiUrl, req);
        tally.add(res.status);
        assertApiAnswer(req, res);
      }),
      fuzzParameters("REST transcoder", 400),
    );
    t.diagnostic(`statuses: ${tally}`);
    tally.assertReached([[200, 300]]);
  });

  it("still serves normal requests afterwards, and logged no server fault", async () => {
    const ping = await rawRequest(wharf.apiUrl, { method: "GET", path: "/ping/v2/ping" });
    assert.equal(ping.status, 200);
    const groups = await wharf.api("/iam/v2/groups", { token: wharf.adminToken });
    assert.equal(groups.status, 200, await groups.text());
    assertNoServerFaultLogged(wharf.logLines);
  });
});
