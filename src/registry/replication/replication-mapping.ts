import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../../core/api-convert.js";
import {
  type ReplicationRule,
  ReplicationRule_Direction,
  ReplicationRule_Trigger,
  ReplicationRuleSchema,
  type ReplicationRun,
  ReplicationRun_State,
  ReplicationRunSchema,
} from "../../gen/platform/registry/v2/replication_pb.js";
import type {
  ReplicationDirection,
  ReplicationRuleRow,
  ReplicationRunRow,
  ReplicationRunState,
  ReplicationTrigger,
} from "../../storage/replication-store.js";

const DIRECTIONS: Record<ReplicationDirection, ReplicationRule_Direction> = {
  PUSH: ReplicationRule_Direction.PUSH,
  PULL: ReplicationRule_Direction.PULL,
};
const TRIGGERS: Record<ReplicationTrigger, ReplicationRule_Trigger> = {
  ON_PUSH: ReplicationRule_Trigger.ON_PUSH,
  INTERVAL: ReplicationRule_Trigger.INTERVAL,
  MANUAL: ReplicationRule_Trigger.MANUAL,
};
const STATES: Record<ReplicationRunState, ReplicationRun_State> = {
  QUEUED: ReplicationRun_State.QUEUED,
  RUNNING: ReplicationRun_State.RUNNING,
  SUCCEEDED: ReplicationRun_State.SUCCEEDED,
  FAILED: ReplicationRun_State.FAILED,
};

/** The stored direction of an API value; undefined for UNSPECIFIED or unknown numbers. */
export function directionOf(value: ReplicationRule_Direction): ReplicationDirection | undefined {
  return (Object.keys(DIRECTIONS) as ReplicationDirection[]).find((k) => DIRECTIONS[k] === value);
}

/** The stored trigger of an API value; undefined for UNSPECIFIED or unknown numbers. */
export function triggerOf(value: ReplicationRule_Trigger): ReplicationTrigger | undefined {
  return (Object.keys(TRIGGERS) as ReplicationTrigger[]).find((k) => TRIGGERS[k] === value);
}

/** The API's ReplicationRule of a stored row: never the password, only whether there is one. */
export function replicationRuleMessage(row: ReplicationRuleRow): ReplicationRule {
  return create(ReplicationRuleSchema, {
    uid: row.uid,
    name: row.name,
    direction: DIRECTIONS[row.direction],
    remote: { url: row.remoteUrl, username: row.remoteUsername, hasPassword: row.remotePassword !== "" },
    repoPattern: row.repoPattern,
    tagPattern: row.tagPattern,
    destination: row.destination,
    trigger: TRIGGERS[row.trigger],
    interval: row.interval,
    enabled: row.enabled,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  });
}

/** The API's ReplicationRun of a stored row. */
export function replicationRunMessage(row: ReplicationRunRow): ReplicationRun {
  return create(ReplicationRunSchema, {
    uid: row.uid,
    rule: row.ruleUid,
    startTime: toTimestamp(row.startTime),
    endTime: toTimestamp(row.endTime),
    state: STATES[row.state],
    copiedManifests: BigInt(row.copiedManifests),
    copiedBlobs: BigInt(row.copiedBlobs),
    copiedBytes: BigInt(row.copiedBytes),
    skippedBlobs: BigInt(row.skippedBlobs),
    errors: row.errors.map((e) => ({ reference: e.reference, message: e.message })),
    errorsOmitted: BigInt(row.errorsOmitted),
    trigger: TRIGGERS[row.trigger],
    createTime: toTimestamp(row.createTime),
  });
}
