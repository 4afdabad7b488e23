/** What a quota event reports: the organization, its usage, what the push adds, the limits. */
export interface QuotaNoticeFacts {
  orgUid: string;
  /** Bytes stored: after the push (warning), before the refused push (exceeded). */
  storageBytes: number;
  /** Bytes the push adds or would have added. */
  requestedBytes: number;
  quotaStorageBytes: number;
  quotaRepoCount: number;
  /** The image path pushed to, when known. */
  repository: string;
  /** Repos the organization holds, for a refusal by the repo count. */
  repoCount?: number;
}

/**
 * A push refused because it would take its organization past its storage quota: the registry
 * answers 403 DENIED with this message, "quota exceeded: <org> uses <X> of <Y> bytes". Thrown inside
 * the push's transaction, so nothing of the push is recorded.
 */
export class QuotaExceededError extends Error {
  constructor(
    orgName: string,
    readonly notice: QuotaNoticeFacts,
  ) {
    super(`quota exceeded: ${orgName} uses ${notice.storageBytes} of ${notice.quotaStorageBytes} bytes`);
    this.name = "QuotaExceededError";
  }
}
