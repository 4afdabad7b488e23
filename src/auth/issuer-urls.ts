import type { SettingsStore } from "../storage/settings-store.js";

/** Settings keys of the URLs the last started server announced. */
const API_URL_KEY = "issuer.api_url";
const REGISTRY_URL_KEY = "issuer.registry_url";

/** Where the running servers' issuer is: the API URL (`iss`, API audience) and the registry audience. */
export interface IssuerUrls {
  apiUrl: string;
  registryUrl: string;
}

/**
 * Records the URLs a server started with, so tools that sign with the stored keys (`wharf admin
 * token`) mint tokens this server accepts without being told where it listens. The last server
 * to start wins: servers sharing one database are expected to share one public URL.
 */
export async function recordIssuerUrls(settings: SettingsStore, urls: IssuerUrls): Promise<void> {
  await settings.put(API_URL_KEY, urls.apiUrl);
  await settings.put(REGISTRY_URL_KEY, urls.registryUrl);
}

/** The URLs recorded by `recordIssuerUrls`, each undefined when no server has recorded one. */
export async function recordedIssuerUrls(settings: SettingsStore): Promise<Partial<IssuerUrls>> {
  const [apiUrl, registryUrl] = await Promise.all([
    settings.get(API_URL_KEY),
    settings.get(REGISTRY_URL_KEY),
  ]);
  const urls: Partial<IssuerUrls> = {};
  if (apiUrl) urls.apiUrl = apiUrl;
  if (registryUrl) urls.registryUrl = registryUrl;
  return urls;
}
