import { bindService, type ServiceBinding } from "../core/service.js";
import { GroupsService } from "../gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService } from "../gen/platform/iam/v2/identities_pb.js";
import { RoleBindingsService } from "../gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "../gen/platform/iam/v2/roles_pb.js";
import { PingService } from "../gen/platform/ping/v2/ping_pb.js";
import { ImagesService } from "../gen/platform/registry/v2/images_pb.js";
import { ReposService } from "../gen/platform/registry/v2/repos_pb.js";
import { TagsService } from "../gen/platform/registry/v2/tags_pb.js";
import { createGroupsService } from "../iam/groups-service.js";
import { createIdentitiesService } from "../iam/identities-service.js";
import { createRoleBindingsService } from "../iam/role-bindings-service.js";
import { createRolesService } from "../iam/roles-service.js";
import { createPingService } from "../ping/ping-service.js";
import { createImagesService } from "../registry/images-service.js";
import { createReposService } from "../registry/repos-service.js";
import { createTagsService } from "../registry/tags-service.js";
import type { ServiceDeps } from "./deps.js";

/** Every service of the platform API, bound to its implementation; served by every transport. */
export function createServiceBindings(deps: ServiceDeps): ServiceBinding[] {
  return [
    bindService(PingService, createPingService()),
    bindService(GroupsService, createGroupsService(deps)),
    bindService(IdentitiesService, createIdentitiesService(deps)),
    bindService(RolesService, createRolesService(deps)),
    bindService(RoleBindingsService, createRoleBindingsService(deps)),
    bindService(ReposService, createReposService(deps)),
    bindService(TagsService, createTagsService(deps)),
    bindService(ImagesService, createImagesService(deps)),
  ];
}
