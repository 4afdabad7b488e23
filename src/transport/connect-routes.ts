import type { DescService, Message, Registry } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextKey,
  createConnectRouter,
  createContextKey,
  createContextValues,
  type HandlerContext,
  type MethodImpl,
} from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import { type Cancellation, clientCancelled, deadlineExceeded } from "../core/cancellation.js";
import type { DomainError } from "../core/errors.js";
import { ServerReflection as ReflectionV1 } from "../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { binaryFramingOf, checkBinaryBody } from "./binary-body-check.js";
import { toConnectError } from "./error-mapping.js";
import { normalizeGrpcMessage } from "./grpc-message-encoding.js";
import type { AnyRequest, AnyResponse } from "./http-response.js";
import type { MethodEntry } from "./method-table.js";
import type { CallRecord, Pipeline } from "./pipeline.js";
import {
  createReflectionIndex,
  type ReflectionIndex,
  type ReflectionRequestLike,
} from "./reflection-index.js";

/** Options of {@link createConnectRoutes}. */
export interface ConnectRoutesOptions {
  methods: readonly MethodEntry[];
  pipeline: Pipeline;
  /** Types for `google.protobuf.Any` in Connect JSON. */
  registry: Registry;
  /** Larger request messages are rejected by connect (RESOURCE_EXHAUSTED). */
  maxBodyBytes: number;
}

/** The Connect/gRPC/gRPC-Web side of the API port. */
export interface ConnectRoutes {
  /** Every RPC path served (`/platform.ping.v2.PingService/Ping`, the reflection services…). */
  readonly paths: ReadonlySet<string>;
  /**
   * Serves a request on one of `paths`, already started on the pipeline as `record` (whose
   * `protocol` was guessed from the content type; a `grpc` response gets its `grpc-message`
   * re-encoded, see `normalizeGrpcMessage`).
   */
  handle(req: AnyRequest, res: AnyResponse, record: CallRecord): void;
}

const kRecord: ContextKey<CallRecord | undefined> = createContextKey<CallRecord | undefined>(undefined);

/**
 * Mounts every bound RPC on a Connect router (gRPC, gRPC-Web and Connect JSON/binary from the
 * same handlers), each wrapped to run through the shared pipeline, plus `grpc.reflection.v1` and
 * `v1alpha` ServerReflection (no authentication: they describe the schema, not data). Domain
 * errors leave as ConnectErrors with typed details. Requests reach the router as
 * `connectNodeAdapter` would pass them, except that a binary request message is checked first
 * (`checkBinaryBody`), so one that does not decode is INVALID_ARGUMENT, not Connect's INTERNAL.
 */
export function createConnectRoutes(options: ConnectRoutesOptions): ConnectRoutes {
  const { pipeline, methods } = options;
  const services = [...new Set(methods.map((m) => m.service))];
  const reflection = createReflectionIndex([...services, ReflectionV1, ReflectionV1alpha]);

  /** Bodies that did not decode (see `checkBinaryBody`): answered before the pipeline runs. */
  const undecodable = new WeakMap<CallRecord, DomainError>();
  const router = createConnectRouter({
    readMaxBytes: options.maxBodyBytes,
    jsonOptions: { registry: options.registry },
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  for (const entry of methods) {
    const impl = async (request: Message, hctx: HandlerContext): Promise<unknown> => {
      const record = hctx.values.get(kRecord);
      if (!record) throw new Error("connect request without a call record");
      record.protocol = hctx.protocolName as CallRecord["protocol"];
      const givenUp = followSignal(hctx.signal, record.cancellation);
      try {
        const invalid = undecodable.get(record);
        if (invalid) {
          record.rpc = entry.rpcName;
          throw invalid;
        }
        const answer = pipeline.invoke(
          record,
          entry,
          request,
          hctx.requestHeader.get("authorization") ?? undefined,
        );
        return await Promise.race([answer, givenUp.promise]);
      } catch (err) {
        throw toConnectError(pipeline.fail(record, err), entry.domain);
      } finally {
        givenUp.stop();
        // Connect sends the response headers with the answer and with an error alike.
        for (const [name, value] of Object.entries(record.rateLimitHeaders ?? {}))
          hctx.responseHeader.set(name, value);
      }
    };
    router.rpc(entry.method, impl as unknown as MethodImpl<typeof entry.method>);
  }
  router.service(ReflectionV1, { serverReflectionInfo: reflectionStream(reflection, ReflectionV1) });
  router.service(ReflectionV1alpha, {
    serverReflectionInfo: reflectionStream(reflection, ReflectionV1alpha),
  });
  const handlers = new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));
  const entries = new Map(methods.map((m) => [m.rpcPath, m]));

  const paths = new Set<string>(methods.map((m) => m.rpcPath));
  for (const service of [ReflectionV1, ReflectionV1alpha] as DescService[]) {
    for (const method of service.methods) paths.add(`/${service.typeName}/${method.name}`);
  }

  return {
    paths,
    handle(req, res, record) {
      if (record.protocol === "grpc") normalizeGrpcMessage(res);
      const handler = handlers.get(record.path);
      if (!handler) {
        res.writeHead(404);
        res.end();
        return;
      }
      const values = createContextValues();
      values.set(kRecord, record);
      let uReq = universalRequestFromNodeRequest(req, res, undefined, values);
      const entry = entries.get(record.path);
      const framing = binaryFramingOf(req.headers["content-type"], req.headers["content-encoding"]);
      if (entry && framing && req.method === "POST") {
        const body = uReq.body as AsyncIterable<Uint8Array>;
        const onInvalid = (err: DomainError) => undecodable.set(record, err);
        const checked = checkBinaryBody(body, framing, entry.method.input, options.maxBodyBytes, onInvalid);
        // The body may be swapped for an empty message, whose length is not the declared one.
        const header = new Headers(uReq.header);
        header.delete("content-length");
        uReq = { ...uReq, header, body: checked };
      }
      handler(uReq)
        .then((uRes) => universalResponseToNodeResponse(uRes, res))
        .catch((reason: unknown) => {
          // What connectNodeAdapter does: a client gone (ABORTED) is no failure; anything else
          // breaks the response already on its way, so the record keeps the cause for its log line.
          if (ConnectError.from(reason).code === Code.Aborted) return;
          record.cause ??= reason;
          res.destroy();
        });
    },
  };
}

/**
 * Connect's HandlerContext signal fires at the call's deadline (`connect-timeout-ms`, or
 * `grpc-timeout` for gRPC and gRPC-Web) and when the client goes away, but Connect waits for the
 * handler before it answers. This gives `cancellation` up when `signal` fires (DEADLINE_EXCEEDED for
 * a deadline, else CANCELLED), and `promise` rejects with that reason then, so the call is answered
 * at once while its handler winds down. `stop` once the call is answered: Connect aborts the signal
 * after every call.
 */
function followSignal(
  signal: AbortSignal,
  cancellation: Cancellation,
): { promise: Promise<never>; stop(): void } {
  let onAbort = (): void => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => {
      const deadline = ConnectError.from(signal.reason).code === Code.DeadlineExceeded;
      cancellation.abort(deadline ? deadlineExceeded() : clientCancelled());
      reject(cancellation.reason);
    };
  });
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return { promise, stop: () => signal.removeEventListener("abort", onAbort) };
}

/** The bidi reflection stream: one answer per request, files sent at most once per stream. */
function reflectionStream(index: ReflectionIndex, service: DescService) {
  return async function* <R extends ReflectionRequestLike>(requests: AsyncIterable<R>, hctx: HandlerContext) {
    const record = hctx.values.get(kRecord);
    if (record) {
      record.rpc = `${service.typeName}/ServerReflectionInfo`;
      record.protocol = hctx.protocolName as CallRecord["protocol"];
    }
    const sent = new Set<string>();
    for await (const request of requests) {
      yield {
        validHost: request.host,
        originalRequest: request,
        messageResponse: index.answer(request, sent),
      };
    }
    if (record) record.code = 0;
  };
}
