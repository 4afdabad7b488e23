/**
 * Secrets Wharf must use later (upstream and replication remote passwords) are stored sealed:
 * AES-256-GCM under a key kept in the store's settings, created once on first use and shared by
 * every replica. Implemented by `secretBoxOf` (issue 36, ADR 0051). A sealed value is a string
 * safe for a text column; it says which key version sealed it.
 */
export interface SecretBox {
  /** Seals `plain`; "" stays "" (no secret). */
  seal(plain: string): Promise<string>;
  /** Opens a value `seal` made; "" stays "". A value that was tampered with, or sealed under another key, throws. */
  open(sealed: string): Promise<string>;
}
