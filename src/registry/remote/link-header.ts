/**
 * The `rel="next"` target of a `Link` header (RFC 8288), resolved against `base`; undefined when
 * there is none or it is not a URL. distribution sends `</v2/app/tags/list?last=b&n=2>; rel="next"`.
 */
export function nextLink(value: string | string[] | undefined, base: URL): URL | undefined {
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  for (const header of values) {
    for (const match of header.matchAll(/<([^>]*)>([^,<]*)/g)) {
      const params = match[2] ?? "";
      if (!/;\s*rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(params)) continue;
      try {
        return new URL(match[1] ?? "", base);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
