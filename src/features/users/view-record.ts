import type { SessionMarks } from '../../auth/revocation.js';

/** What the bearer step reads on every `/me` request. */
export interface UserAccess extends SessionMarks {
  state: string;
}

/** One user's read model: both prepared bodies and what the bearer step checks. */
export interface UserViewParts {
  platform: Uint8Array;
  me: Uint8Array;
  /** The app's `updated_at` when `me` was rendered: a schema change makes it stale. */
  schemaStamp: string;
  access: UserAccess;
}

/**
 * The parts of a user's read model in one binary record, so a write stores one value for them all
 * and a read copies out only the part it serves. Layout: four little-endian u32 lengths (platform,
 * me, schema stamp, access), then those byte strings in that order; the stamp and access are UTF-8 JSON.
 */
const HEADER = 16;

export function encodeUserView(parts: UserViewParts): Buffer {
  const stamp = Buffer.from(parts.schemaStamp);
  const access = Buffer.from(JSON.stringify(parts.access));
  const record = Buffer.allocUnsafe(HEADER + parts.platform.length + parts.me.length + stamp.length + access.length);
  let at = HEADER;
  [parts.platform, parts.me, stamp, access].forEach((part, index) => {
    record.writeUInt32LE(part.length, index * 4);
    record.set(part, at);
    at += part.length;
  });
  return record;
}

/** Where part `index` lies in `record`. */
function span(record: Uint8Array, index: number): [start: number, end: number] {
  const view = new DataView(record.buffer, record.byteOffset, HEADER);
  let start = HEADER;
  for (let i = 0; i < index; i++) start += view.getUint32(i * 4, true);
  return [start, start + view.getUint32(index * 4, true)];
}

/** A copy of the part: `record` may be a buffer that LMDB reuses on the next read. */
const copyOf = (record: Uint8Array, index: number) => Uint8Array.prototype.slice.call(record, ...span(record, index));
const textOf = (record: Uint8Array, index: number) => Buffer.from(record.buffer, record.byteOffset).toString('utf8', ...span(record, index));

export const platformPart = (record: Uint8Array): Uint8Array => copyOf(record, 0);
export const mePart = (record: Uint8Array): { me: Uint8Array; schemaStamp: string } => ({ me: copyOf(record, 1), schemaStamp: textOf(record, 2) });
export const accessPart = (record: Uint8Array): UserAccess => JSON.parse(textOf(record, 3)) as UserAccess;
