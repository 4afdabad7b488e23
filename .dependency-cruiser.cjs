// The import rules of src/ (ADR 0021), checked by `npm run lint:deps` in CI. Folders form layers
// and imports only run down them:
//
//   composition  server.ts, service-bindings.ts, composition/,     builds and starts everything
//                cli/, config/, workers/ (the entry module of each worker thread)
//   edges        transport/, oci/, plain-routes/                  speak HTTP, gRPC, OCI to clients
//   domains      iam/, registry/, events/, federation/, login/, ping/, libraries/, advisories/, vulnreports/, audit/
//   shared kits  auth/, authz/, core/, oidc/, codec/, observability/
//   seams        storage/                                          metadata store and blob drivers
//
// src/gen/ (generated protobuf code) may be imported by any layer and imports nothing of ours.
// src/sdk/ (the client SDK, `wharf/sdk`, ADR 0027) stands beside the layers: it imports only itself
// and src/gen/; the CLI (composition) may use it, the server's layers never do.
// src/cli/ forks in two: src/cli/server/ (serve, gc, admin, import …, on the server's modules) and
// src/cli/client/ (the everyday client commands, ADR 0028), which imports only itself, src/sdk/ and
// src/gen/; src/cli/main.ts and program.ts join both into one command tree.
// Tests live under test/ only, so src/ is exactly what ships.
// console/src/ (the web console, ADR 0032) is checked too: it reaches the server only through the
// SDK (`wharf/sdk`, resolved to src/sdk/index.ts by tsconfig.depcruise.json) and has no cycles.

const COMPOSITION = "^src/(server\\.ts|service-bindings\\.ts|composition/|cli/|config/|workers/)";
const EDGES = "^src/(transport|oci|plain-routes)/";
const DOMAINS = "^src/(iam|registry|events|federation|login|ping|libraries|advisories|vulnreports|audit)/";
const KITS = "^src/(auth|authz|core|oidc|codec|observability)/";
const SEAMS = "^src/storage/";
const GENERATED = "^src/gen/";
const SDK = "^src/sdk/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "A file cycle (type-only imports included) means neither file can be read, tested or moved " +
        "alone; break it by moving the shared piece to the lower of the two.",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-folder-cycle",
      severity: "error",
      comment:
        "Folders are the units of the architecture: when two import each other, a piece sits in " +
        "the wrong one (login <-> federation, registry <-> oci were such cycles).",
      scope: "folder",
      from: { path: "^(src|console)/" },
      to: { circular: true },
    },
    {
      name: "edges-not-to-composition",
      severity: "error",
      comment:
        "Edges adapt domains to a protocol; the composition root hands them what they need, so an " +
        "edge never reaches up into server.ts, the service bindings, the CLI or the configuration.",
      from: { path: EDGES },
      to: { path: COMPOSITION },
    },
    {
      name: "transport-is-generic",
      severity: "error",
      comment:
        "transport/ serves any set of services (REST, gRPC, Connect, plain routes); what a domain " +
        "answers on it is bound in the composition root or in plain-routes/, never here.",
      from: { path: "^src/transport/" },
      to: { path: `${DOMAINS}|^src/(oci|plain-routes)/` },
    },
    {
      name: "oci-not-to-storage",
      severity: "error",
      comment:
        "oci/ is the registry's HTTP edge (routes, auth challenge, request parsing, OCI error bodies); " +
        "blobs, manifests, tags, uploads and GC are the registry domain's (src/registry/data-plane/, " +
        "ADR 0008), so a handler reaches content only through its functions, never the store or a blob driver.",
      from: { path: "^src/oci/" },
      to: { path: SEAMS },
    },
    {
      name: "domains-not-to-edges-or-composition",
      severity: "error",
      comment:
        "Domains hold the rules of the platform and know no protocol: they take a RequestContext, " +
        "throw DomainErrors and are bound to HTTP/gRPC/OCI by the edges.",
      from: { path: DOMAINS },
      to: { path: `${EDGES}|${COMPOSITION}` },
    },
    {
      name: "kits-not-to-upper-layers",
      severity: "error",
      comment:
        "Shared kits (tokens, authorization, core types, OIDC, codecs, metrics, workers) are used " +
        "by several domains and edges; importing one of those would tie every user to it.",
      from: { path: KITS },
      to: { path: `${DOMAINS}|${EDGES}|${COMPOSITION}` },
    },
    {
      name: "core-is-the-base",
      severity: "error",
      comment:
        "core/ (errors, context, lists, uidps, validation) is what every other folder builds on; " +
        "it imports only itself and generated code.",
      from: { path: "^src/core/" },
      to: { path: "^src/", pathNot: "^src/(core|gen)/" },
    },
    {
      name: "storage-is-a-seam",
      severity: "error",
      comment:
        "storage/ is the seam to the database and blob stores: it speaks in rows and keys, so it " +
        "imports only core/ and itself, never a transport, an edge, a domain service or a kit.",
      from: { path: SEAMS },
      to: { path: "^src/", pathNot: "^src/(storage|core)/" },
    },
    {
      name: "gen-is-a-leaf",
      severity: "error",
      comment: "src/gen/ is generated by `npm run generate` and imports nothing but generated code.",
      from: { path: GENERATED },
      to: { path: "^src/", pathNot: "^src/gen/" },
    },
    {
      name: "sdk-is-a-client",
      severity: "error",
      comment:
        "src/sdk/ ships to users' programs and browsers (ADR 0027): it speaks to a server over the " +
        "wire, so it imports only itself and the generated code, never a server module.",
      from: { path: SDK },
      to: { path: "^src/", pathNot: "^src/(sdk|gen)/" },
    },
    {
      name: "cli-client-on-the-sdk",
      severity: "error",
      comment:
        "The everyday CLI commands (src/cli/client/, ADR 0028) are a client like any user's program: " +
        "they reach the server only through the SDK over the wire, never through a server module.",
      from: { path: "^src/cli/client/" },
      to: { path: "^src/", pathNot: "^src/(cli/client|sdk|gen)/" },
    },
    {
      name: "console-on-the-sdk",
      severity: "error",
      comment:
        "The web console (console/, ADR 0032) talks to the API only through the SDK, like any " +
        "user's program: it imports `wharf/sdk` (src/sdk/), which re-exports the generated messages, " +
        "enums and schemas it needs per domain, and nothing else of src/ (not src/gen/ directly).",
      from: { path: "^console/" },
      to: { path: "^src/", pathNot: "^src/sdk/" },
    },
    {
      name: "sdk-browser-safe",
      severity: "error",
      comment:
        "`wharf/sdk` runs in browsers: outside src/sdk/node/ it imports no node: module and no " +
        "Node-only package (connect-node); Node extras live in src/sdk/node/ (`wharf/sdk/node`).",
      from: { path: SDK, pathNot: "^src/sdk/node/" },
      to: { path: "^node:|@connectrpc/connect-node|^src/sdk/node/" },
    },
    {
      name: "sdk-no-node-builtins",
      severity: "error",
      comment: "The same rule for Node's built-in modules (`node:fs`, `fs`…), which resolve to no path.",
      from: { path: SDK, pathNot: "^src/sdk/node/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "server-not-to-sdk",
      severity: "error",
      comment:
        "The server's layers (edges, domains, kits, seams) never use the client SDK: a server " +
        "calling itself through its own client hides a missing seam. Only the CLI may.",
      from: {
        path: `${EDGES}|${DOMAINS}|${KITS}|${SEAMS}|${GENERATED}|^src/(server\\.ts|service-bindings\\.ts|composition/|config/|workers/)`,
      },
      to: { path: SDK },
    },
    {
      name: "every-module-has-a-layer",
      severity: "error",
      comment:
        "A new top-level folder or file in src/ joins a layer above (and a line of the architecture " +
        "map in docs/guide/architecture.md) before it is used, so the rules cover it.",
      from: {
        path: "^src/",
        pathNot: `${COMPOSITION}|${EDGES}|${DOMAINS}|${KITS}|${SEAMS}|${GENERATED}|${SDK}`,
      },
      to: {},
    },
    {
      name: "src-not-to-tests",
      severity: "error",
      comment:
        "src/ is what ships: it never imports test code, fixtures, benches or scripts, nor the " +
        "console's sources (built apart into dist/console and served as files).",
      from: { path: "^src/" },
      to: { path: "^(test|bench|scripts|console)/" },
    },
    {
      name: "no-tests-in-src",
      severity: "error",
      comment: "Tests live under test/ (unit, conformance, e2e, robustness, support), never in src/.",
      from: { path: "^src/.+\\.test\\.ts$" },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: a type cycle is still a cycle for the reader.
    tsPreCompilationDeps: true,
    // The root's tsconfig, plus the console's `wharf/sdk` path (tsconfig.depcruise.json).
    tsConfig: { fileName: "tsconfig.depcruise.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      // .tsx: the console's components (which import without extensions).
      extensions: [".ts", ".tsx", ".mjs", ".js"],
    },
  },
};
