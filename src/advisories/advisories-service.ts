import { pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import type { RequestContext } from "../core/context.js";
import { invalidArgument, notFound, permissionDenied } from "../core/errors.js";
import { type ListSpec, type PageTokenCodec, paginate } from "../core/list.js";
import { pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { requireUidp } from "../core/uidp.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type {
  AdvisoriesService,
  ListAdvisoriesRequest,
} from "../gen/platform/vulnerabilities/v2/advisories_pb.js";
import type {
  AdvisoryEventType,
  AdvisoryFilter,
  AdvisoryRow,
  ReviewState,
} from "../storage/advisory-store.js";
import type { Store } from "../storage/store.js";
import { advisoryMessage, eventTypeOf, reviewStateOf } from "./advisory-mapping.js";

/** What AdvisoriesService and SecurityAdvisoryService are built from. */
export interface AdvisoriesServiceDeps {
  /** The imported advisories and vulnerability metadata, read only. */
  store: Pick<Store, "advisories">;
  pageTokens: PageTokenCodec;
}

const ADVISORY_LIST: ListSpec<AdvisoryRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (row, field) =>
    field === "create_time" ? row.createTime : field === "update_time" ? row.updateTime : row.uid,
  uidOf: (row) => row.uid,
};

/** Advisory data is global: any group where the caller holds CAP_ADVISORIES_LIST will do. */
async function requireAdvisoryReader(ctx: RequestContext): Promise<void> {
  const scopes = await ctx.access.scopesWith([Capability.CAP_ADVISORIES_LIST]);
  if (!scopes.all && scopes.uids.length === 0) {
    throw permissionDenied("listing advisories needs advisories.list at some group");
  }
}

const defined = <T>(values: (T | undefined)[]): T[] => values.filter((v): v is T => v !== undefined);
const nonEmpty = (values: readonly string[]) => [...new Set(values.filter((v) => v !== ""))];

/** Most values one repeated filter may hold (each is a bound SQL parameter). */
export const MAX_FILTER_VALUES = 1000;
/** Longest `query`. */
export const MAX_QUERY_LENGTH = 256;

const REPEATED_FILTERS = [
  ["advisory_ids", "advisoryIds"],
  ["legacy_advisory_ids", "legacyAdvisoryIds"],
  ["artifact_names", "artifactNames"],
  ["artifact_types", "artifactTypes"],
  ["artifact_architectures", "artifactArchitectures"],
  ["component_names", "componentNames"],
  ["component_types", "componentTypes"],
  ["component_locations", "componentLocations"],
  ["aliases", "aliases"],
  ["event_review_states", "eventReviewStates"],
  ["event_authors", "eventAuthors"],
  ["exclude_event_authors", "excludeEventAuthors"],
  ["event_reviewers", "eventReviewers"],
  ["event_types", "eventTypes"],
] as const;

/**
 * The store filter of a ListAdvisories request (UNSPECIFIED enum values are ignored). More than
 * MAX_FILTER_VALUES values in one filter, or a query longer than MAX_QUERY_LENGTH, is
 * INVALID_ARGUMENT naming the field.
 */
export function advisoryFilterOf(req: ListAdvisoriesRequest): AdvisoryFilter {
  for (const [field, key] of REPEATED_FILTERS) {
    if (req[key].length > MAX_FILTER_VALUES) {
      throw invalidArgument(field, `at most ${MAX_FILTER_VALUES} values (got ${req[key].length})`);
    }
  }
  if (req.query.length > MAX_QUERY_LENGTH) {
    throw invalidArgument("query", `at most ${MAX_QUERY_LENGTH} characters (got ${req.query.length})`);
  }
  const latest = eventTypeOf(req.latestEventType);
  return {
    uidp: toUidpFilter(req.uidp),
    advisoryIds: nonEmpty(req.advisoryIds),
    legacyAdvisoryIds: nonEmpty(req.legacyAdvisoryIds),
    artifactNames: nonEmpty(req.artifactNames),
    artifactTypes: nonEmpty(req.artifactTypes),
    artifactArchitectures: nonEmpty(req.artifactArchitectures),
    componentNames: nonEmpty(req.componentNames),
    componentTypes: nonEmpty(req.componentTypes),
    componentLocations: nonEmpty(req.componentLocations),
    aliases: nonEmpty(req.aliases),
    ...(req.origin ? { origin: req.origin } : {}),
    eventReviewStates: defined<ReviewState>(req.eventReviewStates.map(reviewStateOf)),
    eventAuthors: nonEmpty(req.eventAuthors),
    excludeEventAuthors: nonEmpty(req.excludeEventAuthors),
    eventReviewers: nonEmpty(req.eventReviewers),
    eventTypes: defined<AdvisoryEventType>(req.eventTypes.map(eventTypeOf)),
    ...(latest ? { latestEventType: latest } : {}),
    ...(req.query.trim() ? { query: req.query.trim() } : {}),
    showDeleted: req.showDeleted,
  };
}

/**
 * AdvisoriesService (`platform.vulnerabilities.v2`): read-only advisories. Both RPCs need
 * CAP_ADVISORIES_LIST at any group (advisories belong to no organization). Withdrawn advisories are
 * listed only with `show_deleted`; Get returns them with their delete_time.
 */
export function createAdvisoriesService(
  deps: AdvisoriesServiceDeps,
): ServiceHandlers<typeof AdvisoriesService> {
  const { store } = deps;
  return {
    async listAdvisories(req, ctx) {
      await requireAdvisoryReader(ctx);
      const filter = advisoryFilterOf(req);
      const page = await paginate(pageRequestOf(req), filter, ADVISORY_LIST, deps.pageTokens, (window) =>
        store.advisories.list(filter, window),
      );
      return { advisories: page.items.map(advisoryMessage), ...pageEnvelope(page) };
    },

    async getAdvisory(req, ctx) {
      await requireAdvisoryReader(ctx);
      const row = await store.advisories.get(requireUidp("uid", req.uid));
      if (!row) throw notFound("advisory", req.uid);
      return advisoryMessage(row);
    },
  };
}
