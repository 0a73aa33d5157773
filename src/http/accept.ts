import { mediaType } from './body.js';

/** A weight of zero among a media range's parameters (`;q=0`, `; Q=0.000`): the range refuses its type (RFC 9110 §12.5.1). */
const ZERO_WEIGHT = /;\s*q\s*=\s*0(?:\.0{0,3})?\s*(?:;|$)/i;

/**
 * Whether an `Accept` header asks for `type` (lower case): one of its media ranges names it exactly (not
 * `application/jsonx`, nor a wildcard, which a browser sends), with a weight other than `q=0`.
 */
export const asksFor = (accept: string, type: string): boolean =>
  accept
    .toLowerCase()
    .split(',')
    .some((range) => mediaType(range) === type && !ZERO_WEIGHT.test(range));
