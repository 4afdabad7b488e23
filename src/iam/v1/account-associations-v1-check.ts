import { invalidArgument } from "../../core/errors.js";
import {
  type AccountAssociations,
  AccountAssociationsCheckRequest_AccountType as AccountType,
  AccountAssociationsStatus_CheckStatus as CheckStatus,
} from "../../gen/platform/iam/v1/account_associations_pb.js";

/** The provider block of an association that `AccountType` names. */
const BLOCK_OF: Record<
  Exclude<AccountType, AccountType.UNSPECIFIED>,
  "google" | "amazon" | "azure" | "github"
> = {
  [AccountType.GOOGLE]: "google",
  [AccountType.AMAZON]: "amazon",
  [AccountType.AZURE]: "azure",
  [AccountType.GITHUB]: "github",
};

/** What a v1 `:check` answers. */
export interface CheckAnswer {
  status: CheckStatus;
  reason: string;
  message: string;
}

/**
 * Whether `association` (undefined: the group has none) is configured for `accountType`. Wharf
 * makes no live credential exchange with cloud providers, so "ready" means what the v2 rules can
 * vouch for: the provider's block is recorded, and v2 validated it when it was written. Throws
 * INVALID_ARGUMENT on `account_type` when it is unspecified or unknown.
 */
export function checkAccountAssociation(
  association: AccountAssociations | undefined,
  accountType: AccountType,
): CheckAnswer {
  const block = BLOCK_OF[accountType as keyof typeof BLOCK_OF];
  if (block === undefined) {
    throw invalidArgument(
      "account_type",
      "must name a provider: ACCOUNT_TYPE_GOOGLE, _AMAZON, _AZURE or _GITHUB",
    );
  }
  if (association === undefined) {
    return {
      status: CheckStatus.NOT_READY,
      reason: "ASSOCIATION_MISSING",
      message: `the group has no account association; create one with its ${block} block`,
    };
  }
  if (association[block] === undefined) {
    return {
      status: CheckStatus.NOT_READY,
      reason: "PROVIDER_NOT_CONFIGURED",
      message: `the group's account association has no ${block} block`,
    };
  }
  return { status: CheckStatus.READY, reason: "", message: `the ${block} block is recorded` };
}
