import type { SessionMarks } from '../../auth/revocation.js';

/** What the bearer step reads on every `/me` request. */
export interface UserAccess extends SessionMarks {
  state: string;
}

/**
 * A profile body as JSON text cut where its `groups` value goes: the pairs name groups whose
 * rendering lives once per group, so a change to a group rewrites one record, not one per member.
 */
export interface BodyCut {
  /** The platform body up to `"groups":`. */
  platformHead: string;
  /** The `/me` body (only user-readable `data`) up to `"groups":`. */
  meHead: string;
  /** What follows the `groups` value, in both bodies. */
  tail: string;
}

/** One of the user's memberships as its profile lists it: the group's ID and the member's JSON text (or its UTF-8 bytes). */
export interface GroupEntry {
  groupId: string;
  member: string | Uint8Array;
}

/** A user's bodies as `BodyCut` cuts them, and its member card. */
export interface RenderedUser extends BodyCut {
  /** What a member's `profile` shows of its user: `memberCardOf` its `data`. */
  card: string;
}

/** One user's read model. */
export interface UserViewParts extends RenderedUser {
  /** The app's schema stamp (`schemaStampOf`) when the `/me` head was rendered: a schema change makes it stale. */
  schemaStamp: string;
  access: UserAccess;
  /** The user's memberships, in group ID order (encoded by `encodeGroupEntries`). */
  groups: Uint8Array;
}

/**
 * The parts of a user's read model in one binary record, so a write stores one value for them all
 * and a read copies out only what it serves. Layout: seven little-endian u32 byte lengths (platform
 * head, me head, tail, schema stamp, access, groups, member card), then those byte strings in that
 * order; the texts (all but the access and groups parts) are UTF-8, the access part is
 * `encodeAccess`'s, the groups `encodeGroupEntries`'s. The card came last (data format 7), so the
 * parts the hot reads find kept their indices; formats 5 and 6 had the first six alone.
 */
const PARTS = 7;
const HEADER = PARTS * 4;
const [PLATFORM_HEAD, ME_HEAD, TAIL, SCHEMA_STAMP, ACCESS, GROUPS, CARD] = [0, 1, 2, 3, 4, 5, 6];

export function encodeUserView(parts: UserViewParts): Buffer {
  const { platformHead, meHead, tail, schemaStamp, access, groups, card } = parts;
  return recordOf([platformHead, meHead, tail, schemaStamp, encodeAccess(access), groups, card]);
}

/** A record of its parts (as strings or bytes), in layout order: their byte lengths, then the parts. */
function recordOf(parts: ReadonlyArray<string | Uint8Array>): Buffer {
  const lengths = parts.map((part) => (typeof part === 'string' ? Buffer.byteLength(part) : part.length));
  const header = parts.length * 4;
  const record = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + length, header));
  lengths.forEach((length, index) => record.writeUInt32LE(length, index * 4));
  let at = header;
  for (const part of parts) {
    if (typeof part === 'string') at += record.write(part, at);
    else {
      record.set(part, at);
      at += part.length;
    }
  }
  return record;
}

/** The fields of `data` a member's `profile` shows, in the order it shows them. */
const CARD_FIELDS = ['email', 'first_name', 'last_name'] as const;

/**
 * The member card of a user whose `data` this is: JSON text of its `email`, `first_name` and
 * `last_name`, those it holds, in that order. Kept in the record so that answering a member reads
 * these few values, not the user's whole body (up to 4 MiB of `data` and attributes).
 */
export function memberCardOf(data: Record<string, unknown>): string {
  const card: Record<string, unknown> = {};
  for (const field of CARD_FIELDS) if (Object.hasOwn(data, field)) card[field] = data[field];
  return JSON.stringify(card);
}

/**
 * The access part, binary because the bearer step decodes it on every `/me` request (a sixth of
 * what `JSON.parse` of the same marks costs): the state (a u8 byte length and UTF-8), `createdAt` and
 * `revokedBefore` (f64), the number of revoked sessions (u32), then each one's ID (a u16 byte length
 * and UTF-8) and `until` (f64). All little-endian.
 */
function encodeAccess(access: UserAccess): Buffer {
  const state = Buffer.from(access.state);
  const sids = access.revokedSessions.map((session) => Buffer.from(session.sid));
  const size = 1 + state.length + 8 + 8 + 4 + sids.reduce((sum, sid) => sum + 2 + sid.length + 8, 0);
  const out = Buffer.allocUnsafe(size);
  let at = out.writeUInt8(state.length, 0);
  at += state.copy(out, at);
  at = out.writeDoubleLE(access.createdAt, at);
  at = out.writeDoubleLE(access.revokedBefore, at);
  at = out.writeUInt32LE(sids.length, at);
  access.revokedSessions.forEach((session, index) => {
    at = out.writeUInt16LE(sids[index].length, at);
    at += sids[index].copy(out, at);
    at = out.writeDoubleLE(session.until, at);
  });
  return out;
}

/** Group entries as the record's groups part: per entry a u32 length and the group ID, a u32 length and the member JSON. */
export function encodeGroupEntries(entries: readonly GroupEntry[]): Buffer {
  const pieces = entries.flatMap(({ groupId, member }) => [Buffer.from(groupId), typeof member === 'string' ? Buffer.from(member) : member]);
  const out = Buffer.allocUnsafe(pieces.reduce((sum, piece) => sum + 4 + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    at = out.writeUInt32LE(piece.length, at);
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/** Where part `index` starts in `record`. The reads use it rather than `span`: a pair per part read was a tenth of what a read allocated. */
function startOf(record: Buffer, index: number): number {
  let start = HEADER;
  for (let i = 0; i < index; i++) start += lengthAt(record, i);
  return start;
}

/** Where part `index` lies in `record`. */
function span(record: Buffer, index: number): [start: number, end: number] {
  const start = startOf(record, index);
  return [start, start + lengthAt(record, index)];
}

const lengthAt = (record: Buffer, index: number) => record.readUInt32LE(index * 4);

function textOf(record: Buffer, index: number): string {
  const start = startOf(record, index);
  return record.toString('utf8', start, start + lengthAt(record, index));
}

/** A copy of `bytes[start, end)`, from Buffer's pool: cheaper than a new ArrayBuffer per read. */
export function copyOf(bytes: Buffer, start = 0, end = bytes.length): Buffer {
  const copy = Buffer.allocUnsafe(end - start);
  // Not `bytes.copy`: LMDB's reused buffer reports the value's length but is larger, which `copy` trips on.
  copy.set(bytes.subarray(start, end));
  return copy;
}

/** The rendered group bytes of a group ID (bytes that stay valid: not LMDB's reused buffer), or undefined when there are none. */
export type GroupBytes = (groupId: string) => Uint8Array | undefined;

const GROUPS_NONE = Buffer.from('[]');
const PAIR_OPEN = Buffer.from('{"group":');
const PAIR_MEMBER = Buffer.from(',"member":');
const PAIR_CLOSE = Buffer.from('}');
const LIST_OPEN = Buffer.from('[');
const LIST_NEXT = Buffer.from(',');
const LIST_CLOSE = Buffer.from(']');

/**
 * A whole body of `record`, the platform one or the `/me` one, with its `groups` filled in from
 * `groupBytes`. Unless `owned`, `record` may be the buffer LMDB reuses on its next read, and
 * `groupBytes` reads: a record with groups is then copied before any of them is read.
 */
function bodyOf(record: Buffer, head: number, groupBytes: GroupBytes, owned = false): Buffer {
  if (!listsGroups(record)) return bodyListingNone(record, head);
  const groupsStart = startOf(record, GROUPS);
  const groupsEnd = groupsStart + lengthAt(record, GROUPS);
  const headStart = startOf(record, head);
  const headEnd = headStart + lengthAt(record, head);
  const tailStart = startOf(record, TAIL);
  const tailEnd = tailStart + lengthAt(record, TAIL);
  const own = owned ? record : copyOf(record);
  const groups = groupsListPieces(groupEntriesIn(own.subarray(groupsStart, groupsEnd)), groupBytes);
  return Buffer.concat([own.subarray(headStart, headEnd), ...groups, own.subarray(tailStart, tailEnd)]);
}

const listsGroups = (record: Buffer) => lengthAt(record, GROUPS) > 0;

/** The body of a record that lists no groups: its head, `[]`, its tail (copied: `record` may be LMDB's buffer). */
function bodyListingNone(record: Buffer, head: number): Buffer {
  const headStart = startOf(record, head);
  const headEnd = headStart + lengthAt(record, head);
  const tailStart = startOf(record, TAIL);
  const tailEnd = tailStart + lengthAt(record, TAIL);
  const body = Buffer.allocUnsafe(headEnd - headStart + GROUPS_NONE.length + tailEnd - tailStart);
  body.set(record.subarray(headStart, headEnd));
  body.set(GROUPS_NONE, headEnd - headStart);
  body.set(record.subarray(tailStart, tailEnd), headEnd - headStart + GROUPS_NONE.length);
  return body;
}

/** The pieces of a `groups` value, `[{"group":…,"member":…},…]`; an entry whose group has no rendering is left out. */
function groupsListPieces(entries: Iterable<GroupEntry>, groupBytes: GroupBytes): Uint8Array[] {
  const pieces: Uint8Array[] = [LIST_OPEN];
  for (const { groupId, member } of entries) {
    const group = groupBytes(groupId);
    if (!group) continue;
    if (pieces.length > 1) pieces.push(LIST_NEXT);
    pieces.push(PAIR_OPEN, group, PAIR_MEMBER, typeof member === 'string' ? Buffer.from(member) : member, PAIR_CLOSE);
  }
  pieces.push(LIST_CLOSE);
  return pieces;
}

/** The `groups` value of a body listing `entries`, as JSON bytes. */
export const groupsList = (entries: Iterable<GroupEntry>, groupBytes: GroupBytes): Buffer =>
  Buffer.concat(groupsListPieces(entries, groupBytes));

/**
 * `record` with the entry of `groupId` in its groups part set to `member`, or dropped when `member`
 * is undefined; entries stay in group ID order, the order of the memberships table's keys. The
 * entry is found by comparing IDs in place and spliced in: the other entries are copied as bytes,
 * so a change costs one copy of the record however many groups it lists. `record` may be LMDB's
 * reused buffer.
 */
export function withGroupEntry(record: Buffer, groupId: string, member: string | undefined): Buffer {
  const [groupsStart, groupsEnd] = span(record, GROUPS);
  const id = Buffer.from(groupId);
  // The entry is set over [at, after): the old entry of `groupId`, or nothing before the first ID above it.
  let at = groupsEnd;
  let after = groupsEnd;
  for (const entry of entrySpans(record, groupsStart, groupsEnd)) {
    const order = record.compare(id, 0, id.length, entry.idStart, entry.idEnd);
    if (order < 0) continue;
    at = entry.start;
    after = order === 0 ? entry.next : entry.start;
    break;
  }
  const entry = member === undefined ? Buffer.alloc(0) : encodeGroupEntries([{ groupId, member }]);
  // Up to the card's end, not `record.length`: LMDB's reused buffer may be larger than the record.
  const out = Buffer.concat([record.subarray(0, at), entry, record.subarray(after, span(record, CARD)[1])]);
  out.writeUInt32LE(groupsEnd - groupsStart - (after - at) + entry.length, GROUPS * 4);
  return out;
}

/** Where each entry of the groups part at `[start, end)` of `bytes` lies: its start, its group ID, its member and the next entry's start. */
function* entrySpans(bytes: Buffer, start: number, end: number) {
  while (start < end) {
    const idStart = start + 4;
    const idEnd = idStart + bytes.readUInt32LE(start);
    const memberStart = idEnd + 4;
    const next = memberStart + bytes.readUInt32LE(idEnd);
    yield { start, idStart, idEnd, memberStart, next };
    start = next;
  }
}

/** The entries of a groups part, each member's JSON as bytes. */
function* groupEntriesIn(groups: Buffer): Generator<GroupEntry> {
  for (const { idStart, idEnd, memberStart, next } of entrySpans(groups, 0, groups.length)) {
    yield { groupId: groups.toString('utf8', idStart, idEnd), member: groups.subarray(memberStart, next) };
  }
}

/**
 * `body` opening with `opening`, the key of the user's ID as `SVC_BRAND` names it now (`{"svc_user":`):
 * a record rendered under another brand opens with that brand's key until its user is written again.
 */
export function withOpening(body: Buffer, opening: Buffer): Buffer {
  if (opensWith(body, opening)) return body;
  // A brand's key (`<brand>_user`, lowercase letters and digits) holds no escape: it ends at the first `":`.
  return Buffer.concat([opening, body.subarray(body.indexOf('":', 2) + 2)]);
}

/**
 * Whether `bytes` opens with `prefix`: for a dozen bytes a loop takes a fifth of the time of
 * `Buffer#compare`, whose offset checks cost more than the compare (docs/PERFORMANCE.md, round 19).
 */
function opensWith(bytes: Buffer, prefix: Buffer): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/** The platform body, whole: a copy, never LMDB's buffer. */
export const platformBody = (record: Buffer, groupBytes: GroupBytes): Buffer => bodyOf(record, PLATFORM_HEAD, groupBytes);

/** What a `/me` answer needs of a view record, kept by the bearer step for the GET that may answer. */
export interface MeView {
  /**
   * The `/me` body, whole, when the record lists no groups: put together at once, which costs what
   * copying the record would (docs/PERFORMANCE.md, round 19). Otherwise a copy of the whole record,
   * whose body `meBody` puts together when it is asked for, reading the groups then.
   */
  bytes: Buffer;
  whole: boolean;
  /** The app's schema stamp when the `/me` head was rendered. */
  schemaStamp: string;
}

/** What `/me` answers may need of `record`, copied out of it (it may be LMDB's reused buffer). */
export function meView(record: Buffer): MeView {
  const schemaStamp = textOf(record, SCHEMA_STAMP);
  if (listsGroups(record)) return { bytes: copyOf(record), whole: false, schemaStamp };
  return { bytes: bodyListingNone(record, ME_HEAD), whole: true, schemaStamp };
}

/** The `/me` body, whole: a copy, never LMDB's buffer. */
export const meBody = (view: MeView, groupBytes: GroupBytes): Buffer => (view.whole ? view.bytes : bodyOf(view.bytes, ME_HEAD, groupBytes, true));

/** The access marks of a view record, as `encodeAccess` laid them out. */
export function accessPart(record: Buffer): UserAccess {
  let at = startOf(record, ACCESS);
  const stateEnd = at + 1 + record[at];
  const state = record.toString('utf8', at + 1, stateEnd);
  const createdAt = record.readDoubleLE(stateEnd);
  const revokedBefore = record.readDoubleLE(stateEnd + 8);
  const count = record.readUInt32LE(stateEnd + 16);
  at = stateEnd + 20;
  const revokedSessions = [];
  for (let i = 0; i < count; i++) {
    const sidEnd = at + 2 + record.readUInt16LE(at);
    revokedSessions.push({ sid: record.toString('utf8', at + 2, sidEnd), until: record.readDoubleLE(sidEnd) });
    at = sidEnd + 8;
  }
  return { state, createdAt, revokedBefore, revokedSessions };
}

/** How many parts a record had in data formats 5 and 6: all but the card. */
const FORMAT_6_PARTS = 6;

/**
 * The parts of a record as data formats 5 and 6 laid it out (six lengths, then the parts), as views
 * of `record`; undefined for a record of this build's layout, which a format step before may have
 * rendered. Such a record is never taken for one of six parts: it is longer than a header of six
 * lengths and the parts they measure, by its seventh length and its card.
 */
export function format6Parts(record: Buffer): Buffer[] | undefined {
  if (record.length < FORMAT_6_PARTS * 4) return undefined;
  const parts: Buffer[] = [];
  let at = FORMAT_6_PARTS * 4;
  for (let index = 0; index < FORMAT_6_PARTS && at <= record.length; index++) parts.push(record.subarray(at, (at += lengthAt(record, index))));
  return at === record.length && parts.length === FORMAT_6_PARTS ? parts : undefined;
}

/**
 * A record of data format 5, which kept its access marks as JSON text, with them binary, in format
 * 6's layout; undefined for a record whose marks are binary already (the first byte of binary marks,
 * a state's length, is never `{`) or which has this build's layout.
 */
export function format5Upgraded(record: Buffer): Buffer | undefined {
  const parts = format6Parts(record);
  if (!parts || parts[ACCESS][0] !== 0x7b) return undefined;
  parts[ACCESS] = encodeAccess(JSON.parse(parts[ACCESS].toString('utf8')) as UserAccess);
  return recordOf(parts);
}

/**
 * A record of data format 6 in this build's layout: its parts, then the member card of the `data`
 * in its platform body; undefined for a record that has this build's layout already.
 */
export function format6Upgraded(record: Buffer): Buffer | undefined {
  const parts = format6Parts(record);
  if (!parts) return undefined;
  const body = JSON.parse(bodyWithoutGroups(parts[PLATFORM_HEAD].toString('utf8'), parts[TAIL].toString('utf8')));
  return recordOf([...parts, memberCardOf(body.data)]);
}

/** The platform body with `null` for its groups: the text the user's stored state is read back from. */
export const storedBody = (record: Buffer): string => bodyWithoutGroups(textOf(record, PLATFORM_HEAD), textOf(record, TAIL));

/** A body's text from its head and tail, `null` where its `groups` go. */
const bodyWithoutGroups = (head: string, tail: string): string => `${head}null${tail}`;

/** A copy of the groups part, to carry into the user's next record. */
export const groupsPart = (record: Buffer): Buffer => copyOf(record, ...span(record, GROUPS));

/** The member card, as `memberCardOf` rendered it. */
export const cardPart = (record: Buffer): string => textOf(record, CARD);
