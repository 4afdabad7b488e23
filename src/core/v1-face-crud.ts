import {
  create,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { RequestContext } from "./context.js";
import type { ServiceHandlers } from "./service.js";
import { everyV2Item, scopedGetOrNothing } from "./v1-face.js";
import type { V1Resource } from "./v1-face-convert.js";

type Handler = (request: unknown, ctx: RequestContext) => Promise<MessageInitShape<DescMessage>>;

/**
 * The standard v1 CRUD of one resource over its v2 service (docs/adr/0030), found by reflection on
 * the v2 service descriptor: `Create<Name>`, `Get<Name>`, `Update<Name>` and `Delete<Name>` of the
 * v2 resource `<Name>`, and the `List…` method whose answer lists it. Requests are built from the
 * descriptors (`parent` and the resource field, the resource field and `update_mask`, `uid`), and
 * answers converted by `resource`. A face keeps in its own code what its v1 does differently.
 */
export interface V1Crud<V1 extends DescMessage, V2 extends DescMessage> {
  /** The v2 Create under `parent`; `input` absent leaves the resource out (v2 says it is required). */
  create(
    parent: string,
    input: MessageInitShape<V2> | undefined,
    ctx: RequestContext,
  ): Promise<MessageShape<V1>>;
  /** A v1 PUT: the v2 Update of `input` with the resource's mask naming every updatable field. */
  update(input: MessageInitShape<V2>, ctx: RequestContext): Promise<MessageShape<V1>>;
  delete(uid: string, ctx: RequestContext): Promise<Record<string, never>>;
  /** The v2 Get (NOT_FOUND when missing). */
  get(uid: string, ctx: RequestContext): Promise<MessageShape<V2>>;
  /**
   * v1's Get, a filter on `id` of an unscoped list: the resource, or undefined when it does not
   * exist or the caller lacks `capabilities` there ({@link scopedGetOrNothing}).
   */
  getIfListed(
    id: string,
    capabilities: readonly Capability[],
    ctx: RequestContext,
  ): Promise<MessageShape<V2> | undefined>;
  /** Every item of the v2 List with `filters` (fields of the v2 list request), gathered unpaged. */
  gather(filters: Record<string, unknown>, ctx: RequestContext): Promise<MessageShape<V2>[]>;
  /** {@link gather}, answered as a v1 list. */
  list(filters: Record<string, unknown>, ctx: RequestContext): Promise<{ items: MessageShape<V1>[] }>;
}

export function v1Crud<S extends DescService, V1 extends DescMessage, V2 extends DescMessage>(
  service: S,
  handlers: ServiceHandlers<S>,
  resource: V1Resource<V1, V2>,
  v2Path: string,
): V1Crud<V1, V2> {
  const { v2 } = resource;
  const handlerOf = (method: DescMethod) =>
    (handlers as unknown as Record<string, Handler>)[method.localName] as Handler;
  /** Calls `<verb><Resource>` with the request `fields` build (given the request descriptor). */
  const call = async (
    verb: string,
    ctx: RequestContext,
    fields: (request: DescMessage) => Record<string, unknown>,
  ) => {
    const method = service.methods.find((m) => m.name === `${verb}${v2.name}`);
    if (!method) throw new Error(`${service.typeName} has no ${verb}${v2.name}`);
    // Create, Get and Update answer the resource; Delete's empty answer is not read.
    return (await handlerOf(method)(create(method.input, fields(method.input)), ctx)) as MessageInitShape<V2>;
  };
  /** The field of a request that holds the resource. */
  const resourceField = (request: DescMessage) =>
    request.fields.find((f) => f.fieldKind === "message" && f.message.typeName === v2.typeName)?.localName ??
    "";
  const isItems = (f: DescField) => f.fieldKind === "list" && f.message?.typeName === v2.typeName;
  const listMethod = service.methods.find((m) => m.name.startsWith("List") && m.output.fields.some(isItems));
  const get = async (uid: string, ctx: RequestContext) => create(v2, await call("Get", ctx, () => ({ uid })));

  const gather = (filters: Record<string, unknown>, ctx: RequestContext) => {
    const items = listMethod?.output.fields.find(isItems)?.localName;
    if (!listMethod || !items) throw new Error(`${service.typeName} lists no ${v2.name}`);
    const unknown = Object.keys(filters).filter(
      (key) => !listMethod.input.fields.some((f) => f.localName === key),
    );
    if (unknown.length > 0) throw new Error(`${listMethod.name} has no field ${unknown.join(", ")}`);
    return everyV2Item(
      v2Path,
      async (paging) =>
        (await handlerOf(listMethod)(create(listMethod.input, { ...filters, ...paging }), ctx)) as Record<
          string,
          unknown
        >,
      (page) => ((page[items] ?? []) as MessageInitShape<V2>[]).map((item) => create(v2, item)),
    );
  };

  return {
    create: async (parent, input, ctx) =>
      resource.toV1(
        await call("Create", ctx, (request) => ({
          parent,
          ...(input ? { [resourceField(request)]: input } : {}),
        })),
      ),
    update: async (input, ctx) =>
      resource.toV1(
        await call("Update", ctx, (request) => ({
          [resourceField(request)]: input,
          updateMask: resource.mask,
        })),
      ),
    async delete(uid, ctx) {
      await call("Delete", ctx, () => ({ uid }));
      return {};
    },
    get,
    getIfListed: (id, capabilities, ctx) => scopedGetOrNothing(ctx, id, capabilities, () => get(id, ctx)),
    gather,
    list: async (filters, ctx) => ({ items: (await gather(filters, ctx)).map(resource.toV1) }),
  };
}
