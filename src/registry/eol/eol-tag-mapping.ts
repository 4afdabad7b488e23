import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../../core/api-convert.js";
import {
  type EolTag,
  EolTag_GraceStatus,
  EolTag_TagStatus,
  EolTagSchema,
  type PackageVersion,
  PackageVersionSchema,
} from "../../gen/platform/registry/v1/eol_tags_pb.js";
import type { EolCycleRow } from "../../storage/eol-store.js";
import type { TagRow } from "../../storage/registry-store.js";
import type { EolState, GraceStatus, TagLifeStatus } from "./eol-status.js";
import type { TagEol } from "./tag-eol-resolver.js";

const TAG_STATUS: Record<TagLifeStatus, EolTag_TagStatus> = {
  ACTIVE: EolTag_TagStatus.TAG_ACTIVE,
  IN_GRACE: EolTag_TagStatus.TAG_IN_GRACE,
  INACTIVE: EolTag_TagStatus.TAG_INACTIVE,
};

const GRACE_STATUS: Record<GraceStatus, EolTag_GraceStatus> = {
  NOT_ELIGIBLE: EolTag_GraceStatus.GRACE_NOT_ELIGIBLE,
  ELIGIBLE: EolTag_GraceStatus.GRACE_ELIGIBLE,
  ACTIVE: EolTag_GraceStatus.GRACE_ACTIVE,
  BROKEN: EolTag_GraceStatus.GRACE_BROKEN,
  EXPIRED: EolTag_GraceStatus.GRACE_EXPIRED,
};

/** The v1 EolTag of `tag`, matched by a rule (`eol`), in the EOL state `state`. */
export function eolTagMessage(tag: TagRow, eol: TagEol, state: EolState): EolTag {
  return create(EolTagSchema, {
    id: tag.uid,
    name: tag.name,
    mainPackageName: eol.rule.product,
    tagStatus: TAG_STATUS[state.tagStatus],
    mainPackageVersion: packageVersionMessage(eol, state),
    graceStatus: GRACE_STATUS[state.graceStatus],
    gracePeriodExpiryDate: toTimestamp(state.gracePeriodExpiryDate),
  });
}

/** The tag's cycle as a PackageVersion; `exists` false (and nothing else but fips) without one. */
function packageVersionMessage(eol: TagEol, state: EolState): PackageVersion {
  const fips = eol.rule.repoName.endsWith("-fips");
  const { cycle } = eol;
  if (cycle === undefined) return create(PackageVersionSchema, { exists: false, fips });
  return create(PackageVersionSchema, {
    exists: true,
    fips,
    version: cycle.cycle,
    codename: cycle.codename,
    lts: cycle.lts,
    legacyLts: isLegacyLts(cycle, eol.productCycles),
    eolBroken: state.eolBroken,
    latestVersion: cycle.latestVersion,
    eolDate: toTimestamp(cycle.eolDate),
    releaseDate: toTimestamp(cycle.releaseDate),
    latestReleaseDate: toTimestamp(cycle.latestReleaseDate),
    supportEndDate: toTimestamp(cycle.supportEndDate),
    extendedSupportEndDate: toTimestamp(cycle.extendedSupportEndDate),
    ltsFrom: toTimestamp(cycle.ltsFrom),
  });
}

/** An LTS cycle of which the product has a newer LTS cycle (a later release date). */
function isLegacyLts(cycle: EolCycleRow, cycles: readonly EolCycleRow[]): boolean {
  if (!cycle.lts || cycle.releaseDate === undefined) return false;
  const released = cycle.releaseDate;
  return cycles.some((c) => c.lts && c.releaseDate !== undefined && c.releaseDate > released);
}
