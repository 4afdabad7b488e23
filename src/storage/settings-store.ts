/** Small shared settings (e.g. the page-token secret), the same for every server process. */
export interface SettingsStore {
  get(key: string): Promise<string | undefined>;
  /** Sets `key` to `value` unless it already has a value; returns the value now stored. */
  putIfAbsent(key: string, value: string): Promise<string>;
  /** Sets `key` to `value`, replacing any value it had. */
  put(key: string, value: string): Promise<void>;
}
