import { ociError } from "./oci-errors.js";
import { authorize, type Exchange, existingRepo, type RegistryDeps, sendJson } from "./registry-request.js";
import { TAG } from "./routes.js";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** True when the fields of an RFC 3339 match name a real date and time (Date.parse rolls Feb 30 over). */
function fieldsInRange(m: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = m
    .slice(1)
    .map((v) => Number(v ?? 0));
  const daysInMonth = new Date(Date.UTC(year as number, month as number, 0)).getUTCDate();
  return (
    (month as number) >= 1 &&
    (month as number) <= 12 &&
    (day as number) >= 1 &&
    (day as number) <= daysInMonth &&
    (hour as number) <= 23 &&
    (minute as number) <= 59 &&
    (second as number) <= 59 &&
    (offsetHour as number) <= 23 &&
    (offsetMinute as number) <= 59
  );
}

/** Parses an RFC 3339 query parameter into ms; INVALID_ARGUMENT (400) naming it when malformed. */
export function parseTimestampParam(name: string, value: string | null): number | undefined {
  if (value === null || value === "") return undefined;
  const match = RFC3339.exec(value);
  const ms = match && fieldsInRange(match) ? Date.parse(value.toUpperCase()) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw ociError(
      "INVALID_ARGUMENT",
      `${name} must be an RFC 3339 timestamp such as 2024-01-01T00:00:00Z, got "${value.slice(0, 60)}"`,
    );
  }
  return ms;
}

/**
 * GET `/v2/<name>/_service/history/<tag>?start=&end=`: every digest the tag pointed to, oldest
 * first, `start` inclusive and `end` exclusive, at most 1000 records (page by moving `start`).
 * A delete shows as `{"digest": "", "deleted": true}`. Unknown repo → NAME_UNKNOWN; a tag that
 * never existed, or a value that is no valid tag → MANIFEST_UNKNOWN (404 all).
 */
export async function tagHistory(deps: RegistryDeps, ex: Exchange, name: string, tag: string): Promise<void> {
  // Like a manifest GET: a value that is no tag can have no history.
  if (!TAG.test(tag)) throw ociError("MANIFEST_UNKNOWN", `"${tag.slice(0, 130)}" is not a valid tag`);
  const { resolved } = await authorize(deps, ex, name, "pull", {
    publicFallback: async (r) => (r.repo ? deps.publicContent.manifest(r.repo.uid, tag) : false),
  });
  const repo = existingRepo(resolved);
  const start = parseTimestampParam("start", ex.url.searchParams.get("start"));
  const end = parseTimestampParam("end", ex.url.searchParams.get("end"));
  const rows = await deps.content.tagHistory(repo.uid, tag, { start, end });
  if (rows === undefined) throw ociError("MANIFEST_UNKNOWN", `tag ${tag} is not in ${name}`);
  sendJson(ex, {
    history: rows.map((r) => ({
      updateTimestamp: new Date(r.updateTime).toISOString(),
      digest: r.digest,
      ...(r.digest === "" ? { deleted: true } : {}),
    })),
  });
}
