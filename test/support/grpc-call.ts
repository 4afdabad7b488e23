import { type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";

/**
 * One unary call with @grpc/grpc-js (a real gRPC client, independent of Connect), (de)serialising
 * with protobuf-es. Resolves with the response or the grpc-js ServiceError; never rejects.
 * `options`: grpc-js call options (a `deadline`), more `metadata`, and `started`, told the call
 * (to `cancel` it).
 */
export function grpcCall<I extends DescMessage, O extends DescMessage>(
  client: grpc.Client,
  path: string,
  schemas: { input: I; output: O },
  request: MessageShape<I>,
  token?: string,
  options: grpc.CallOptions & {
    metadata?: Record<string, string>;
    started?: (call: grpc.ClientUnaryCall) => void;
  } = {},
): Promise<{ response?: MessageShape<O>; error?: grpc.ServiceError }> {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  const { started, metadata: more = {}, ...callOptions } = options;
  for (const [key, value] of Object.entries(more)) metadata.set(key, value);
  return new Promise((resolve) => {
    const call = client.makeUnaryRequest(
      path,
      (m: MessageShape<I>) => Buffer.from(toBinary(schemas.input, m)),
      (b: Buffer) => fromBinary(schemas.output, b),
      request,
      metadata,
      callOptions,
      (error, response) => resolve(error ? { error } : { response: response as MessageShape<O> }),
    );
    started?.(call);
  });
}
