import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import type { Column, View } from "./output.js";

/**
 * A view of a generated message: the given columns, and the message's canonical proto JSON
 * (as the REST API answers it) for `-o json|yaml`.
 */
export function protoView<D extends DescMessage>(
  schema: D,
  columns: readonly Column<MessageShape<D>>[],
  id?: (row: MessageShape<D>) => string,
): View<MessageShape<D>> {
  return {
    columns,
    json: (row) => toJson(schema, row as never),
    ...(id ? { id } : {}),
  };
}

/** A column of a row's property, written as a string. */
export function field<T>(header: string, key: keyof T): Column<T> {
  return { header, cell: (row) => String(row[key] ?? "") };
}
