import {
  create,
  type DescField,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";

/** Field names in proto spelling, keyed by the name of the same field in the other version. */
export type Renames = Readonly<Record<string, string>>;

/**
 * The v1 names of v2 fields wherever the v1 protos rename them (docs/adr/0030): the v2 field named
 * a key is the v1 field named its value; every other field has the same name in both versions. A
 * resource adds its own renames (`identity_uid → identity`) beside these.
 */
export const V1_RENAMES: Renames = {
  uid: "id",
  create_time: "created_at",
  update_time: "updated_at",
  delete_time: "deleted_at",
  last_seen_time: "last_seen",
  expiration_time: "expiration",
};

/** One v1 resource over its v2 one, converted by its table ({@link v1Resource}). */
export interface V1Resource<V1 extends DescMessage, V2 extends DescMessage> {
  readonly v1: V1;
  readonly v2: V2;
  /** The v2 update mask of a v1 PUT (full replacement): every updatable field. */
  readonly mask: { paths: string[] };
  /** The v1 message of a v2 answer. */
  toV1(answer: MessageInitShape<V2>): MessageShape<V1>;
  /** The v2 resource a v1 body writes: its `uid` and updatable fields, nothing else. */
  toV2(body: MessageInitShape<V1>): MessageInitShape<V2>;
}

/**
 * A v1 resource by table, through the descriptors of both messages: `toV1` copies each v2 field to
 * the v1 field of the same name or of its rename, `toV2` copies back `uid` and the `updatable`
 * fields. A field copies when both sides have the same kind and type, or are messages of the two
 * versions (a v2 StaticKeys in a v1 Identity, converted by V1_RENAMES). Any other difference
 * (friendly capability names, a v1-only status) is left out here: `v1Extras` gives those v1 fields,
 * and the face writes its own v2 fields, each beside its table with the reason.
 */
export function v1Resource<V1 extends DescMessage, V2 extends DescMessage>(table: {
  v1: V1;
  v2: V2;
  /** v2 proto names of the fields a v1 PUT replaces. */
  updatable: readonly string[];
  /** This resource's renames beside V1_RENAMES: v2 proto name → v1 proto name. */
  renames?: Renames;
  /** v1 fields the table cannot copy, from the v2 answer. */
  v1Extras?: (v2: MessageShape<V2>) => MessageInitShape<V1>;
}): V1Resource<V1, V2> {
  const v1Names = { ...V1_RENAMES, ...table.renames };
  const v2Names = inverse(v1Names);
  const written = new Set(["uid", ...table.updatable]);
  return {
    v1: table.v1,
    v2: table.v2,
    mask: { paths: [...table.updatable] },
    toV1(answer) {
      const v2 = create(table.v2, answer);
      const copied = convert(table.v1, table.v2, v2, (name) => v2Names[name] ?? name);
      return create(table.v1, { ...copied, ...table.v1Extras?.(v2) } as MessageInitShape<V1>);
    },
    toV2: (body) =>
      convert(table.v2, table.v1, body, (name) => (written.has(name) ? (v1Names[name] ?? name) : undefined)),
  };
}

/**
 * The init shape of a `to` message holding the fields of `from` (a `fromSchema` message or its init
 * shape) that correspond: each `to` field reads the field `sourceOf` names, and is left out when
 * there is none, it is unset, or it does not correspond ({@link copy}).
 */
function convert<To extends DescMessage>(
  to: To,
  fromSchema: DescMessage,
  from: MessageInitShape<DescMessage>,
  sourceOf: (name: string) => string | undefined,
): MessageInitShape<To> {
  const source = create(fromSchema, from) as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of to.fields) {
    const name = sourceOf(field.name);
    // A renamed field the other message does not have is named alike there (a v2 `id` stays `id`).
    const sourceField =
      name === undefined ? undefined : (fieldNamed(fromSchema, name) ?? fieldNamed(fromSchema, field.name));
    const value = sourceField && read(source, sourceField);
    const copied = sourceField && value !== undefined ? copy(field, sourceField, value) : undefined;
    if (copied === undefined) continue;
    if (field.oneof) out[field.oneof.localName] = { case: field.localName, value: copied };
    else out[field.localName] = copied;
  }
  return out as MessageInitShape<To>;
}

function fieldNamed(schema: DescMessage, name: string): DescField | undefined {
  return schema.fields.find((f) => f.name === name);
}

function read(message: Record<string, unknown>, field: DescField): unknown {
  if (!field.oneof) return message[field.localName];
  const chosen = message[field.oneof.localName] as { case?: string; value?: unknown };
  return chosen.case === field.localName ? chosen.value : undefined;
}

/** `value` of field `from` as a value of field `to`; undefined when the two do not correspond. */
function copy(to: DescField, from: DescField, value: unknown): unknown {
  if (to.fieldKind === "list" && from.fieldKind === "list" && to.listKind === from.listKind) {
    const items = (value as unknown[]).map((item) => copyValue(to, from, item));
    return items.includes(undefined) ? undefined : items;
  }
  if (to.fieldKind === "map" && from.fieldKind === "map") {
    return to.mapKind === from.mapKind && to.mapKey === from.mapKey && sameType(to, from) ? value : undefined;
  }
  return to.fieldKind === from.fieldKind ? copyValue(to, from, value) : undefined;
}

/** One value (of a field, or an item of a list) between two fields of the same kind. */
function copyValue(to: DescField, from: DescField, value: unknown): unknown {
  if (sameType(to, from)) return value;
  if (!to.message || !from.message) return undefined;
  // A message of the other version, renamed by V1_RENAMES.
  const names = to.message.typeName.includes(".v1.") ? V2_NAMES : V1_RENAMES;
  const init = convert(
    to.message,
    from.message,
    value as MessageInitShape<DescMessage>,
    (n) => names[n] ?? n,
  );
  return create(to.message, init);
}

function sameType(a: DescField, b: DescField): boolean {
  return (
    a.scalar === b.scalar &&
    a.enum?.typeName === b.enum?.typeName &&
    a.message?.typeName === b.message?.typeName
  );
}

function inverse(renames: Renames): Renames {
  return Object.fromEntries(Object.entries(renames).map(([key, value]) => [value, key]));
}

const V2_NAMES = inverse(V1_RENAMES);
