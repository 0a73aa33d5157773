/** What no URL carries as written: whitespace and controls (parsers drop or trim them) and `\`, which parsers read as `/`. */
const UNSAFE = /[\s\x00-\x1f\x7f\\]/;

/**
 * An absolute http(s) URL, as written: `new URL` alone also takes `http:host`, surrounding spaces,
 * `https:///host`, backslashes for slashes and controls inside, each read as some other URL.
 */
export function isAbsoluteHttpUrl(value: string): boolean {
  if (UNSAFE.test(value) || !/^https?:\/\/[^/]/i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Whether a URL names no user name or password: `https://app.example@evil.example/` goes to
 * evil.example, and a password would be shown to every reader. What is no URL at all passes: it has
 * its own message.
 */
export function withoutUserinfo(value: string): boolean {
  if (!URL.canParse(value)) return true;
  const { username, password } = new URL(value);
  return username === '' && password === '';
}

/** The message of a URL `withoutUserinfo` refuses. */
export const USERINFO_REFUSED = 'must not hold a user name or password (user@host)';

/**
 * An http(s) origin as browsers send it in `Origin` (`https://app.example:8443`): a URL that is its own
 * serialized origin, so no path (not even `/`), query, fragment or userinfo, lower case, no default port.
 * No `*` either: URL parsers take `https://*.app.example` for a host, but origins are compared whole,
 * so such an entry, meant as a wildcard, would match no browser.
 */
export const isHttpOrigin = (value: string): boolean => isAbsoluteHttpUrl(value) && !value.includes('*') && new URL(value).origin === value;

/**
 * `.` and `..`, as a path shows them once decoded (`%2E%2E` too): clients and proxies resolve such a
 * segment away (`…/users/../data` reaches `…/data`), so nothing named so can be reached reliably by a path.
 */
export const isDotSegment = (segment: string): boolean => segment === '.' || segment === '..';

/** Words for a name `isDotSegment` refuses: `what` is the kind of name. */
export const dotSegmentRefused = (what: string) => `${what} not . or ..: clients and proxies resolve them away in a path`;

/** Whether the path part of `value` (before `?` or `#`) has a segment URL parsers read as `.` or `..`, `%2e` spelt or not. */
const holdsDotSegment = (value: string): boolean =>
  value
    .split(/[?#]/, 1)[0]
    .split('/')
    .some((segment) => isDotSegment(segment.replace(/%2e/gi, '.')));

/**
 * A path under the service's public URL (`/welcome`): no `//host`, nothing a parser would read as
 * another origin, and no `.` or `..` segment, which would climb out of a public URL's own path
 * (`https://id.example/identity` + `/../app` is `https://id.example/app`).
 */
export const isLocalPath = (value: string): boolean => /^\/(?!\/)/.test(value) && !UNSAFE.test(value) && !holdsDotSegment(value);

/**
 * A local path made absolute under `base` (the service's public URL, which may have a path of its own,
 * and no trailing `/`): appended, as the service's own paths are, never resolved against the host alone.
 * `https://id.example/identity` and `/welcome` give `https://id.example/identity/welcome`.
 */
export const underBase = (base: string, localPath: string): URL => new URL(`${base}${localPath}`);
