// `npm run generate`, after `buf generate`: writes src/gen/openapi.json, the OpenAPI 3.1 document of
// the REST API (ADR 0029). The protos are compiled by `buf build` with their source info, so field,
// message and RPC comments become descriptions; every service of a `platform.*` package is
// described, so a new proto needs no change here.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createFileRegistry, type DescMessage, type DescService, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { buildOpenApiDocument } from "../src/transport/openapi-document.js";

const root = new URL("..", import.meta.url);
const output = new URL("src/gen/openapi.json", root);

const image = execFileSync("npx", ["buf", "build", "--output", "-#format=binpb"], {
  cwd: root,
  maxBuffer: 64 * 1024 * 1024,
});
const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, image));

const services: DescService[] = [];
for (const file of registry.files) {
  if (file.proto.package.startsWith("platform.")) services.push(...file.services);
}
services.sort((a, b) => (a.typeName < b.typeName ? -1 : a.typeName > b.typeName ? 1 : 0));

const message = (typeName: string): DescMessage => {
  const desc = registry.getMessage(typeName);
  if (!desc) throw new Error(`${typeName} is not in the buf image`);
  return desc;
};

const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string };
const document = buildOpenApiDocument({
  services,
  status: message("google.rpc.Status"),
  errorDetails: ["ErrorInfo", "BadRequest", "ResourceInfo", "PreconditionFailure"].map((n) =>
    message(`google.rpc.${n}`),
  ),
  title: "Wharf platform API",
  version: pkg.version,
  description: readFileSync(new URL("scripts/openapi-intro.md", root), "utf8").trim(),
});
writeFileSync(output, `${JSON.stringify(document, null, 2)}\n`);
console.error(`generate-openapi: wrote ${output.pathname.slice(root.pathname.length)}`);
