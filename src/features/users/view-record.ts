import type { SessionMarks } from '../../auth/revocation.js';

/** What the bearer step reads on every `/me` request. */
export interface UserAccess extends SessionMarks {
  state: string;
}

/** One user's read model: both prepared bodies, what the bearer step checks, and the user's groups. */
export interface UserViewParts {
  /** JSON text of the platform body. */
  platform: string;
  /** JSON text of the `/me` body. */
  me: string;
  /** The app's `updated_at` when `me` was rendered: a schema change makes it stale. */
  schemaStamp: string;
  access: UserAccess;
  /**
   * JSON text of the `{group, member}` pairs both bodies list: a profile change renders its bodies
   * with these instead of reading the memberships again.
   */
  groups: string;
}

/**
 * The parts of a user's read model in one binary record, so a write stores one value for them all
 * and a read copies out only the part it serves. Layout: five little-endian u32 byte lengths
 * (platform, me, schema stamp, access, groups), then those UTF-8 strings in that order.
 */
const PARTS = 5;
const HEADER = PARTS * 4;
const [PLATFORM, ME, SCHEMA_STAMP, ACCESS, GROUPS] = [0, 1, 2, 3, 4];

export function encodeUserView(parts: UserViewParts): Buffer {
  const texts = [parts.platform, parts.me, parts.schemaStamp, JSON.stringify(parts.access), parts.groups];
  const lengths = texts.map((text) => Buffer.byteLength(text));
  const record = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + length, HEADER));
  let at = HEADER;
  for (let index = 0; index < PARTS; index++) {
    record.writeUInt32LE(lengths[index], index * 4);
    at += record.write(texts[index], at);
  }
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
export const platformPart = (record: Buffer): Buffer => copyOf(record, ...span(record, PLATFORM));
/** The `/me` body as rendered, and the schema stamp it was rendered under. */
export interface MeView {
  me: Buffer;
  schemaStamp: string;
}

/** A copy of the `/me` body with its stamp: `record` may be the buffer LMDB reuses on its next read. */
export const mePart = (record: Buffer): MeView => ({
  me: copyOf(record, ...span(record, ME)),
  schemaStamp: textOf(record, SCHEMA_STAMP),
});
export const accessPart = (record: Buffer): UserAccess => JSON.parse(textOf(record, ACCESS)) as UserAccess;
export const groupsPart = (record: Buffer): string => textOf(record, GROUPS);
