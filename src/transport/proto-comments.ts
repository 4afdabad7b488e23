import type { AnyDesc, DescFile } from "@bufbuild/protobuf";

/**
 * The doc comment of a descriptor: its leading comment, then its trailing one, each with the one
 * space after `//` removed and lint directives (`buf:lint:ignore …`) dropped; "" when it has none,
 * or when its file was built without source info (as the descriptors embedded in src/gen are).
 */
export function protoComment(desc: Exclude<AnyDesc, DescFile>): string {
  const info = fileOf(desc).proto.sourceCodeInfo;
  if (!info) return "";
  const key = declarationPath(desc).join(",");
  const location = info.location.find((l) => l.path.join(",") === key);
  if (!location) return "";
  return [location.leadingComments, location.trailingComments]
    .map(cleanComment)
    .filter((text) => text !== "")
    .join("\n\n");
}

function cleanComment(raw: string | undefined): string {
  if (!raw) return "";
  return raw
    .split("\n")
    .map((line) => (line.startsWith(" ") ? line.slice(1) : line).trimEnd())
    .filter((line) => !line.startsWith("buf:lint:"))
    .join("\n")
    .trim();
}

function fileOf(desc: Exclude<AnyDesc, DescFile>): DescFile {
  switch (desc.kind) {
    case "message":
    case "enum":
    case "extension":
    case "service":
      return desc.file;
    default:
      return desc.parent.file;
  }
}

// Field numbers of the descriptor protos (descriptor.proto), as SourceCodeInfo paths use them.
const FILE_MESSAGE = 4;
const FILE_ENUM = 5;
const FILE_SERVICE = 6;
const FILE_EXTENSION = 7;
const MESSAGE_FIELD = 2;
const MESSAGE_NESTED = 3;
const MESSAGE_ENUM = 4;
const MESSAGE_EXTENSION = 6;
const MESSAGE_ONEOF = 8;
const ENUM_VALUE = 2;
const SERVICE_METHOD = 2;

/** The SourceCodeInfo path of a declaration (see descriptor.proto, `Location.path`). */
function declarationPath(desc: Exclude<AnyDesc, DescFile>): number[] {
  switch (desc.kind) {
    case "message":
      return desc.parent
        ? [...declarationPath(desc.parent), MESSAGE_NESTED, desc.parent.proto.nestedType.indexOf(desc.proto)]
        : [FILE_MESSAGE, desc.file.proto.messageType.indexOf(desc.proto)];
    case "enum":
      return desc.parent
        ? [...declarationPath(desc.parent), MESSAGE_ENUM, desc.parent.proto.enumType.indexOf(desc.proto)]
        : [FILE_ENUM, desc.file.proto.enumType.indexOf(desc.proto)];
    case "extension":
      return desc.parent
        ? [
            ...declarationPath(desc.parent),
            MESSAGE_EXTENSION,
            desc.parent.proto.extension.indexOf(desc.proto),
          ]
        : [FILE_EXTENSION, desc.file.proto.extension.indexOf(desc.proto)];
    case "field":
      return [...declarationPath(desc.parent), MESSAGE_FIELD, desc.parent.proto.field.indexOf(desc.proto)];
    case "oneof":
      return [
        ...declarationPath(desc.parent),
        MESSAGE_ONEOF,
        desc.parent.proto.oneofDecl.indexOf(desc.proto),
      ];
    case "enum_value":
      return [...declarationPath(desc.parent), ENUM_VALUE, desc.parent.proto.value.indexOf(desc.proto)];
    case "service":
      return [FILE_SERVICE, desc.file.proto.service.indexOf(desc.proto)];
    case "rpc":
      return [...declarationPath(desc.parent), SERVICE_METHOD, desc.parent.proto.method.indexOf(desc.proto)];
  }
}
