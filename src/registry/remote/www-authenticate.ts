/** One challenge of a `WWW-Authenticate` header: its scheme (lowercase) and parameters (keys lowercase). */
export interface AuthChallenge {
  scheme: string;
  params: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * Parses `WWW-Authenticate` values (RFC 9110 §11.6.1), each of which may hold several challenges:
 * `Bearer realm="https://auth.example/token",service="registry",scope="repository:app:pull", Basic realm="x"`.
 * Quoted strings may contain commas and escaped quotes. Anything unparseable ends the value's
 * parsing (what was read so far is kept): a hostile header yields fewer challenges, never an exception.
 */
export function parseChallenges(values: readonly string[]): AuthChallenge[] {
  const challenges: AuthChallenge[] = [];
  for (const value of values) challenges.push(...parseValue(value));
  return challenges;
}

function parseValue(value: string): AuthChallenge[] {
  const out: AuthChallenge[] = [];
  let rest = value;
  let current: AuthChallenge | undefined;
  for (;;) {
    rest = rest.replace(/^[\s,]+/, "");
    if (rest === "") return out;
    const token = TOKEN.exec(rest)?.[0];
    if (!token) return out;
    const after = rest.slice(token.length);
    const param = /^\s*=\s*/.exec(after);
    // `token68` forms (`Negotiate abc==`) end in "=" with nothing after: not needed here.
    if (param && current && !/^\s*=\s*(,|$)/.test(after)) {
      rest = after.slice(param[0].length);
      const parsed = parseParamValue(rest);
      if (!parsed) return out;
      current.params[token.toLowerCase()] = parsed.value;
      rest = parsed.rest;
      continue;
    }
    if (param) return out;
    current = { scheme: token.toLowerCase(), params: {} };
    out.push(current);
    rest = after;
  }
}

function parseParamValue(text: string): { value: string; rest: string } | undefined {
  if (text.startsWith('"')) {
    let value = "";
    for (let i = 1; i < text.length; i++) {
      const c = text[i];
      if (c === "\\" && i + 1 < text.length) {
        value += text[++i];
      } else if (c === '"') {
        return { value, rest: text.slice(i + 1) };
      } else {
        value += c;
      }
    }
    return undefined;
  }
  const token = TOKEN.exec(text)?.[0];
  if (token === undefined) return undefined;
  return { value: token, rest: text.slice(token.length) };
}
