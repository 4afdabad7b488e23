import type { AccessScopes } from "../core/context.js";
import type { UidpFilter } from "../core/list.js";

/** Filter fields shared by every list. */
export interface CommonFilter {
  uidp?: UidpFilter;
  within?: AccessScopes;
}
