import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { toWharfApiError } from "./errors.js";

// Clients of a table of services, apart from the tables themselves: a program that needs a few
// services (the CLI's lean client) builds their clients without loading every service descriptor.

/** A table of services: a service at the top, or a domain naming its services. */
export type ServiceTable = Readonly<Record<string, DescService | Readonly<Record<string, DescService>>>>;

/** Typed Connect clients for a table of services, with the table's grouping. */
export type ClientsOf<T extends ServiceTable> = {
  readonly [K in keyof T]: T[K] extends DescService
    ? Client<T[K]>
    : { readonly [S in keyof T[K]]: T[K][S] extends DescService ? Client<T[K][S]> : never };
};

/** The clients of every service of `table` on `transport`, grouped as in the table. */
export function clientsFor<T extends ServiceTable>(table: T, transport: Transport): ClientsOf<T> {
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(table)) {
    out[key] = isService(entry)
      ? typedErrorClient(entry, transport)
      : Object.fromEntries(
          Object.entries(entry).map(([name, service]) => [name, typedErrorClient(service, transport)]),
        );
  }
  return out as ClientsOf<T>;
}

/**
 * A Connect client whose unary methods reject with WharfApiError. (An interceptor cannot do it:
 * Connect turns whatever an interceptor throws back into a ConnectError.)
 */
export function typedErrorClient<S extends DescService>(service: S, transport: Transport): Client<S> {
  const client = createClient(service, transport) as unknown as Record<string, unknown>;
  for (const method of service.methods) {
    if (method.methodKind !== "unary") continue;
    const call = client[method.localName] as (...args: unknown[]) => Promise<unknown>;
    client[method.localName] = (...args: unknown[]) =>
      call(...args).catch((err: unknown) => {
        throw toWharfApiError(err);
      });
  }
  return client as unknown as Client<S>;
}

function isService(entry: ServiceTable[string]): entry is DescService {
  return (entry as DescService).kind === "service";
}
