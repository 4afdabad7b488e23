import type { DescField, DescMessage, Message } from "@bufbuild/protobuf";
import { type ReflectList, type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";

/**
 * Resolves a dotted proto field path (`repo.uid`) against `desc`. Every segment but the last must
 * be a singular message field. Each segment may be the proto name or the JSON name. Throws an Error
 * naming the path when a segment does not resolve.
 */
export function resolveFieldPath(desc: DescMessage, path: string): DescField[] {
  const out: DescField[] = [];
  let current: DescMessage | undefined = desc;
  for (const name of path.split(".")) {
    const field: DescField | undefined = current?.fields.find((f) => f.name === name || f.jsonName === name);
    if (!field) throw new Error(`field path "${path}" does not resolve in ${desc.typeName}`);
    out.push(field);
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  return out;
}

/**
 * Sets the leaf of `fields` in `root` to `value` (a reflection value), creating intermediate
 * messages; a repeated leaf gets `value` appended instead. Throws protobuf-es's FieldError when the
 * value does not fit the field.
 */
export function setAtPath(root: ReflectMessage, fields: readonly DescField[], value: unknown): void {
  let target = root;
  const last = fields.length - 1;
  for (let i = 0; i < last; i++) {
    const field = fields[i]!;
    if (field.fieldKind !== "message") throw new Error(`${field.name} is not a message field`);
    if (!target.isSet(field)) target.set(field, reflect(field.message));
    target = target.get(field);
  }
  const leaf = fields[last]!;
  if (leaf.fieldKind === "list") {
    (target.get(leaf) as ReflectList).add(value);
  } else {
    target.set(leaf, value);
  }
}

/**
 * A fast reader of a string field at a path of singular fields (used for IAM scope fields).
 * An unset message on the way, or an unset oneof member, reads as "".
 */
export function stringGetter(fields: readonly DescField[]): (message: Message) => string {
  return (message) => {
    let value: unknown = message;
    for (const field of fields) {
      if (value === undefined || value === null) return "";
      const holder = value as Record<string, unknown>;
      if (field.oneof) {
        const oneof = holder[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
        value = oneof?.case === field.localName ? oneof.value : undefined;
      } else {
        value = holder[field.localName];
      }
    }
    return typeof value === "string" ? value : "";
  };
}
