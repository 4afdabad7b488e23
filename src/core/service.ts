import type { DescMethod, DescService, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { RequestContext } from "./context.js";

type UnaryHandler<M extends DescMethod> = M extends { methodKind: "unary" }
  ? (request: MessageShape<M["input"]>, ctx: RequestContext) => Promise<MessageInitShape<M["output"]>>
  : never;

/**
 * The implementation of one generated service, written once and served by every transport
 * (REST transcoder, gRPC, Connect, gRPC-Web). Authentication and the scoped capability check of
 * the method's IAM annotation have already happened when a handler runs.
 */
export type ServiceHandlers<S extends DescService> = {
  [K in keyof S["method"]]: UnaryHandler<S["method"][K]>;
};

/** A service descriptor with its handlers, as registered with the transports. */
export interface ServiceBinding<S extends DescService = DescService> {
  service: S;
  handlers: ServiceHandlers<S>;
}

/** Pairs a descriptor with its handlers, keeping the handler types checked against the descriptor. */
export function bindService<S extends DescService>(service: S, handlers: ServiceHandlers<S>): ServiceBinding {
  return { service, handlers } as unknown as ServiceBinding;
}
