/** A weight of zero among a media range's parameters (`;q=0`, `; Q=0.000`): the range refuses its type (RFC 9110 §12.5.1). */
const ZERO_WEIGHT = /;\s*q\s*=\s*0(?:\.0{0,3})?\s*(?:;|$)/i;

/** A media range's `type/subtype`, without its parameters or the space around it. */
const mediaTypeOf = (range: string) => {
  const end = range.indexOf(';');
  return (end === -1 ? range : range.slice(0, end)).trim();
};

/**
 * Whether an `Accept` header asks for `type` (lower case): one of its media ranges names it exactly (not
 * `application/jsonx`, nor a wildcard, which a browser sends), with a weight other than `q=0`.
 */
export const asksFor = (accept: string, type: string): boolean =>
  accept
    .toLowerCase()
    .split(',')
    .some((range) => mediaTypeOf(range) === type && !ZERO_WEIGHT.test(range));
