import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { isFieldError, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { type FieldViolation, invalidArgument } from "../core/errors.js";
import { setAtPath } from "./field-path.js";
import { FieldValueError, type LeafDecoder, leafDecoderFor } from "./field-values.js";

/** One request field a query parameter can set. */
export interface QueryField {
  /** The field chain from the request message to the leaf. */
  readonly fields: readonly DescField[];
  /** The dotted proto path (`uidp.descendants_of`). */
  readonly protoPath: string;
  readonly decode: LeafDecoder;
  readonly repeated: boolean;
}

/** Query parameter name (every accepted spelling) → the field it sets. */
export type QueryFieldMap = ReadonlyMap<string, QueryField>;

const MAX_DEPTH = 4;

/**
 * Lists every field of `desc` a query parameter may set: scalars, enums and text-friendly
 * well-known types (see `leafDecoderFor`), singular or repeated, reached through singular message
 * fields up to 4 levels deep. Each is keyed by every mix of proto and JSON names of its path
 * (`uidp.descendants_of`, `uidp.descendantsOf`, `page_size`, `pageSize`). Paths for which
 * `excluded(protoPath)` is true (bound by the URL path or the body) are left out, with everything
 * below them.
 */
export function compileQueryFields(
  desc: DescMessage,
  excluded: (protoPath: string) => boolean,
): QueryFieldMap {
  const out = new Map<string, QueryField>();
  const walk = (message: DescMessage, chain: DescField[], names: string[][], seen: Set<string>): void => {
    for (const field of message.fields) {
      const fields = [...chain, field];
      const protoPath = fields.map((f) => f.name).join(".");
      if (excluded(protoPath)) continue;
      const spellings = [
        ...names,
        field.jsonName === field.name ? [field.name] : [field.name, field.jsonName],
      ];
      const decode = leafDecoderFor(field);
      if (decode) {
        const entry: QueryField = { fields, protoPath, decode, repeated: field.fieldKind === "list" };
        for (const key of combinations(spellings)) out.set(key, entry);
        continue;
      }
      if (field.fieldKind !== "message" || fields.length >= MAX_DEPTH || seen.has(field.message.typeName))
        continue;
      walk(field.message, fields, spellings, new Set([...seen, field.message.typeName]));
    }
  };
  walk(desc, [], [], new Set([desc.typeName]));
  return out;
}

function combinations(spellings: string[][]): string[] {
  let out = [""];
  for (const options of spellings) {
    out = out.flatMap((prefix) => options.map((o) => (prefix === "" ? o : `${prefix}.${o}`)));
  }
  return out;
}

/**
 * Applies a raw query string (without `?`) to `root`. Repeated fields take every occurrence of
 * their key; a singular field given twice, an unknown key or a value that does not decode are
 * INVALID_ARGUMENT with one BadRequest violation per problem, each naming the key as given.
 * Returns the proto paths that were set.
 */
export function applyQueryParams(map: QueryFieldMap, query: string, root: ReflectMessage): Set<string> {
  const set = new Set<string>();
  const violations: FieldViolation[] = [];
  for (const [key, raw] of new URLSearchParams(query)) {
    const entry = map.get(key);
    if (!entry) {
      violations.push({ field: key, description: "unknown query parameter" });
      continue;
    }
    if (!entry.repeated && set.has(entry.protoPath)) {
      violations.push({ field: key, description: "must not be given more than once" });
      continue;
    }
    try {
      setAtPath(root, entry.fields, entry.decode(raw));
      set.add(entry.protoPath);
    } catch (err) {
      if (!(err instanceof FieldValueError) && !isFieldError(err)) throw err;
      violations.push({ field: key, description: err.message });
    }
  }
  const [first, ...rest] = violations;
  if (first) throw invalidArgument(first.field, first.description, rest);
  return set;
}
