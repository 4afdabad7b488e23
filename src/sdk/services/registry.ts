import { ImagesService } from "../../gen/platform/registry/v2/images_pb.js";
import { ImmutabilityRulesService } from "../../gen/platform/registry/v2/immutability_pb.js";
import { InsightsService } from "../../gen/platform/registry/v2/insights_pb.js";
import { PoliciesService } from "../../gen/platform/registry/v2/policies_pb.js";
import { QuotasService } from "../../gen/platform/registry/v2/quotas_pb.js";
import {
  ReplicationRulesService,
  ReplicationRunsService,
} from "../../gen/platform/registry/v2/replication_pb.js";
import { ReposService } from "../../gen/platform/registry/v2/repos_pb.js";
import { RetentionPoliciesService } from "../../gen/platform/registry/v2/retention_pb.js";
import { SbomService } from "../../gen/platform/registry/v2/sbom_pb.js";
import { SearchService } from "../../gen/platform/registry/v2/search_pb.js";
import { SignaturesService } from "../../gen/platform/registry/v2/signatures_pb.js";
import { SigningKeysService } from "../../gen/platform/registry/v2/signing_keys_pb.js";
import { TagsService } from "../../gen/platform/registry/v2/tags_pb.js";
import { UpstreamsService } from "../../gen/platform/registry/v2/upstreams_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the registry domain (`client.registry.…`). */
export const REGISTRY_SERVICES = {
  repos: ReposService,
  tags: TagsService,
  images: ImagesService,
  immutabilityRules: ImmutabilityRulesService,
  retentionPolicies: RetentionPoliciesService,
  quotas: QuotasService,
  upstreams: UpstreamsService,
  policies: PoliciesService,
  replicationRules: ReplicationRulesService,
  replicationRuns: ReplicationRunsService,
  signatures: SignaturesService,
  signingKeys: SigningKeysService,
  sbom: SbomService,
  search: SearchService,
  insights: InsightsService,
} as const satisfies ServiceTable[string];
