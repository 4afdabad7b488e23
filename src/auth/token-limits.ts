/**
 * The limits that bound how long any token of Wharf's issuer can be accepted. Key retirement and
 * revocation pruning both rest on them (ADR 0018), so the issuer and the verifier enforce them
 * rather than trust their callers.
 */

/** The longest lifetime the issuer signs (`exp` - `iat`): 24 h (`wharf admin token --ttl` at most). */
export const MAX_TOKEN_TTL_SECONDS = 24 * 60 * 60;

/**
 * The most clock tolerance a verifier may be built with: 24 h, what the registry grants upload
 * sessions continued with a token that expired meanwhile.
 */
export const MAX_CLOCK_TOLERANCE_SECONDS = 24 * 60 * 60;

/**
 * How long after its `iat` a token of the issuer can still be accepted anywhere: the longest
 * lifetime plus the largest tolerance. A key that stopped signing verifies for this long more; a
 * revocation matches nothing once this long has passed since its cutoff.
 */
export const TOKEN_ACCEPTANCE_HORIZON_MS = (MAX_TOKEN_TTL_SECONDS + MAX_CLOCK_TOLERANCE_SECONDS) * 1000;
