/**
 * `wharf/sdk/node`: what the SDK offers only in Node. A transport over node:http/http2 (gRPC, or
 * Connect over HTTP/2), and the login that `wharf auth login` stores, as a refreshing token source.
 * Everything browser-safe is in `wharf/sdk`.
 */
export { caFetch } from "./ca-fetch.js";
export { type NodeTransportOptions, nodeTransport } from "./node-transport.js";
export {
  configDir,
  loadCredentials,
  type StoredCredentials,
  saveCredentials,
} from "./stored-credentials.js";
export { type StoredLoginOptions, storedLogin, storedToken } from "./stored-login.js";
