import type { Readable } from "node:stream";
import { RemoteError, type RemoteErrorKind } from "./remote-registry.js";

/** Bytes of an error answer read for its message (the rest is dropped). */
const ERROR_BODY_BYTES = 16 * 1024;
/** Characters of the remote's own message kept in ours. */
const REMOTE_MESSAGE_CHARS = 200;
/** OCI error codes that mean "not found" whatever the status they come with. */
const NOT_FOUND_CODES = new Set(["NAME_UNKNOWN", "MANIFEST_UNKNOWN", "BLOB_UNKNOWN", "BLOB_UPLOAD_UNKNOWN"]);

/** Removes secrets (the password, its Basic header) from text a remote sent back. */
export type Redact = (text: string) => string;

/** A Redact for `secrets` (empty ones are ignored). */
export function redactor(secrets: readonly string[]): Redact {
  const present = secrets.filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  return (text) => present.reduce((out, secret) => out.split(secret).join("***"), text);
}

/** Reads at most `limit` bytes of `body` and discards the rest; never throws. */
export async function readSome(body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      chunks.push(buf);
      size += buf.length;
      if (size >= limit) break;
    }
  } catch {
    // the message is only a nicety
  } finally {
    body.on("error", () => undefined);
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/** The remote's own words from an error body: `CODE: message` of its first OCI error, else its text. */
export function remoteWords(bytes: Buffer, redact: Redact): { code?: string; text: string } {
  const raw = bytes.toString("utf8");
  let code: string | undefined;
  let text = raw;
  try {
    const parsed = JSON.parse(raw) as { errors?: { code?: unknown; message?: unknown }[] };
    const first = Array.isArray(parsed?.errors) ? parsed.errors[0] : undefined;
    if (first && typeof first.code === "string") {
      code = first.code;
      text = typeof first.message === "string" ? `${first.code}: ${first.message}` : first.code;
    }
  } catch {
    // not JSON: the text as it is
  }
  const clean = stripControls(redact(text)).trim();
  const short = clean.length > REMOTE_MESSAGE_CHARS ? `${clean.slice(0, REMOTE_MESSAGE_CHARS)}…` : clean;
  return code === undefined ? { text: short } : { code, text: short };
}

/** The kind of a final (non-redirect, post-auth) error status. */
export function kindOfStatus(status: number, code: string | undefined): RemoteErrorKind {
  if (code !== undefined && NOT_FOUND_CODES.has(code)) return "not-found";
  if (status === 401) return "unauthorized";
  if (status === 403) return "denied";
  if (status === 404) return "not-found";
  if (status === 429) return "rate-limited";
  if (status >= 500) return "unreachable";
  if (status >= 400) return "refused";
  return "invalid-response";
}

/**
 * The RemoteError for an unexpected answer: reads a little of the body for the remote's message.
 * `what` names the call (URL and repo).
 */
export async function errorForStatus(
  what: string,
  status: number,
  body: Readable,
  redact: Redact,
): Promise<RemoteError> {
  const words = remoteWords(await readSome(body, ERROR_BODY_BYTES), redact);
  const kind = kindOfStatus(status, words.code);
  const said = words.text === "" ? "" : ` (${words.text})`;
  return new RemoteError(kind, `${what}: HTTP ${status}${said}`, status);
}

/** `text` with each run of control characters (C0, DEL) replaced by one space. */
function stripControls(text: string): string {
  let out = "";
  let inRun = false;
  for (const c of text) {
    const code = c.charCodeAt(0);
    const control = code < 0x20 || code === 0x7f;
    if (control && !inRun) out += " ";
    else if (!control) out += c;
    inRun = control;
  }
  return out;
}
