import type { SessionMarks } from '../../auth/revocation.js';

/** What the bearer step reads on every `/me` request. */
export interface UserAccess extends SessionMarks {
  state: string;
}

/** One user's read model: both prepared bodies and what the bearer step checks. */
interface UserViewParts {
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
function span(record: Buffer, index: number): [start: number, end: number] {
  let start = HEADER;
  for (let i = 0; i < index; i++) start += lengthAt(record, i);
  return [start, start + lengthAt(record, index)];
}

const lengthAt = (record: Buffer, index: number) => record.readUInt32LE(index * 4);

const textOf = (record: Buffer, index: number) => record.toString('utf8', ...span(record, index));

/** A copy of `bytes[start, end)`, from Buffer's pool: cheaper than a new ArrayBuffer per read. */
export function copyOf(bytes: Buffer, start = 0, end = bytes.length): Buffer {
  const copy = Buffer.allocUnsafe(end - start);
  // Not `bytes.copy`: LMDB's reused buffer reports the value's length but is larger, which `copy` trips on.
  copy.set(bytes.subarray(start, end));
  return copy;
}

/** A copy of the platform body: `record` may be the buffer LMDB reuses on its next read. */
export const platformPart = (record: Buffer): Buffer => copyOf(record, ...span(record, 0));
/** The `/me` body as rendered, and the schema stamp it was rendered under. */
export interface MeView {
  me: Buffer;
  schemaStamp: string;
}

/** A copy of the `/me` body with its stamp: `record` may be the buffer LMDB reuses on its next read. */
export const mePart = (record: Buffer): MeView => ({ me: copyOf(record, ...span(record, 1)), schemaStamp: textOf(record, 2) });
export const accessPart = (record: Buffer): UserAccess => JSON.parse(textOf(record, 3)) as UserAccess;
