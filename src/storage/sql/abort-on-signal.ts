import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";

/**
 * A Kysely plugin that throws `signal`'s reason, once it fired, before each query built with the
 * query builder and after each statement of any kind (precompiled and raw ones included): inside a
 * transaction, the throw rolls it back. A statement already sent runs to its end.
 */
export function abortOnSignal(signal: AbortSignal): KyselyPlugin {
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      signal.throwIfAborted();
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      signal.throwIfAborted();
      return args.result;
    },
  };
}
