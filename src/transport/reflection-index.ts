import {
  createRegistry,
  type DescFile,
  type DescMessage,
  type DescService,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/** A reflection request, the same shape in grpc.reflection v1 and v1alpha. */
export interface ReflectionRequestLike {
  host: string;
  messageRequest:
    | {
        case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices";
        value: string;
      }
    | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
}

/** A reflection answer (the `message_response` oneof), the same shape in v1 and v1alpha. */
export type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/** The served schema, indexed for reflection. */
export interface ReflectionIndex {
  /**
   * Answers one request. File answers hold the file first, then its transitive dependencies
   * (breadth first); a dependency already recorded in `sent` (per stream) is not repeated, as in
   * grpc-go. Unknown names are `error_response` NOT_FOUND (5); a request without a case is
   * INVALID_ARGUMENT (3).
   */
  answer(request: ReflectionRequestLike, sent: Set<string>): ReflectionAnswer;
}

const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/**
 * Indexes `services` (listed by `list_services` in this order) and every file they need, transitively.
 * Descriptors are serialized once, here.
 */
export function createReflectionIndex(services: readonly DescService[]): ReflectionIndex {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile): void => {
    if (files.has(fileName(file))) return;
    files.set(fileName(file), file);
    for (const dep of file.dependencies) visit(dep);
  };
  for (const service of services) visit(service.file);
  const registry: Registry = createRegistry(...files.values());
  const encoded = new Map<string, Uint8Array>();
  for (const [name, file] of files) encoded.set(name, toBinary(FileDescriptorProtoSchema, file.proto));
  const serviceNames = services.map((s) => ({ name: s.typeName }));

  const withDependencies = (file: DescFile, sent: Set<string>): ReflectionAnswer => {
    const out: Uint8Array[] = [];
    const queue: DescFile[] = [file];
    const queued = new Set([fileName(file)]);
    for (let i = 0; i < queue.length; i++) {
      const current = queue[i]!;
      if (i === 0 || !sent.has(fileName(current))) {
        sent.add(fileName(current));
        out.push(encoded.get(fileName(current))!);
      }
      for (const dep of current.dependencies) {
        if (!queued.has(fileName(dep))) {
          queued.add(fileName(dep));
          queue.push(dep);
        }
      }
    }
    return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out } };
  };

  const notFound = (what: string): ReflectionAnswer => ({
    case: "errorResponse",
    value: { errorCode: NOT_FOUND, errorMessage: `${what} not found` },
  });

  const fileOfSymbol = (symbol: string): DescFile | undefined => {
    const direct = registry.get(symbol);
    if (direct) return direct.file;
    // Methods and fields are named `<parent>.<member>`.
    const dot = symbol.lastIndexOf(".");
    if (dot < 0) return undefined;
    const parent = registry.get(symbol.slice(0, dot));
    const member = symbol.slice(dot + 1);
    if (!parent) return undefined;
    const has =
      (parent.kind === "service" && parent.methods.some((m) => m.name === member)) ||
      (parent.kind === "message" && parent.fields.some((f) => f.name === member));
    return has ? parent.file : undefined;
  };

  const extensionsOf = (message: DescMessage): number[] => {
    const numbers: number[] = [];
    for (const file of files.values()) {
      for (const type of nestedTypes(file)) {
        if (type.kind === "extension" && type.extendee.typeName === message.typeName)
          numbers.push(type.number);
      }
    }
    return [...new Set(numbers)].sort((a, b) => a - b);
  };

  return {
    answer(request, sent) {
      const r = request.messageRequest;
      switch (r.case) {
        case "listServices":
          return { case: "listServicesResponse", value: { service: serviceNames } };
        case "fileByFilename": {
          const file = files.get(r.value);
          return file ? withDependencies(file, sent) : notFound(`file "${r.value}"`);
        }
        case "fileContainingSymbol": {
          const file = fileOfSymbol(r.value);
          return file ? withDependencies(file, sent) : notFound(`symbol "${r.value}"`);
        }
        case "fileContainingExtension": {
          const { containingType, extensionNumber } = r.value;
          const extendee = registry.getMessage(containingType);
          const extension = extendee ? registry.getExtensionFor(extendee, extensionNumber) : undefined;
          return extension
            ? withDependencies(extension.file, sent)
            : notFound(`extension ${extensionNumber} of "${containingType}"`);
        }
        case "allExtensionNumbersOfType": {
          const message = registry.getMessage(r.value);
          if (!message) return notFound(`message type "${r.value}"`);
          return {
            case: "allExtensionNumbersResponse",
            value: { baseTypeName: message.typeName, extensionNumber: extensionsOf(message) },
          };
        }
        default:
          return {
            case: "errorResponse",
            value: { errorCode: INVALID_ARGUMENT, errorMessage: "empty reflection request" },
          };
      }
    },
  };
}

/** The file's path as imported (`google/protobuf/timestamp.proto`); `DescFile.name` drops `.proto`. */
function fileName(file: DescFile): string {
  return file.proto.name;
}
