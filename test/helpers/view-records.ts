import { accessPart } from '../../src/features/users/view-record.js';

/** A record of these parts as view records lay them out: a u32 byte length per part, then the parts. */
function recordOfParts(parts: ReadonlyArray<string | Uint8Array>): Buffer {
  const buffers = parts.map((part) => Buffer.from(part));
  const header = Buffer.alloc(buffers.length * 4);
  buffers.forEach((part, i) => header.writeUInt32LE(part.length, i * 4));
  return Buffer.concat([header, ...buffers]);
}

/** The seven parts of a record of this build's layout (data formats 7 and 8). */
function currentParts(record: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let at = 7 * 4;
  for (let i = 0; i < 7; i++) parts.push(record.subarray(at, (at += record.readUInt32LE(i * 4))));
  return parts;
}

/**
 * A user's view record as data format 5 laid it out: six u32 byte lengths, then the platform head,
 * the `/me` head, the tail and the schema stamp, the access marks as JSON text, and the groups part.
 */
export function format5Record(texts: ReadonlyArray<string | Uint8Array>, access: unknown, groups: Uint8Array): Buffer {
  return recordOfParts([...texts, JSON.stringify(access), groups]);
}

/** `record` (this build's layout) as format 5 kept it: the same parts but the card, the access marks as JSON text. */
export function asFormat5Record(record: Buffer): Buffer {
  const parts = currentParts(record);
  return format5Record(parts.slice(0, 4), accessPart(record), parts[5]);
}

/** `record` (this build's layout) as format 6 kept it: the same parts but the card, the last. */
export function asFormat6Record(record: Buffer): Buffer {
  return recordOfParts(currentParts(record).slice(0, 6));
}

/** `record` (this build's layout) as format 7 rendered it: its `/me` head shows `verified_data` whole, as the platform head does. */
export function asFormat7Record(record: Buffer): Buffer {
  const parts = currentParts(record);
  const verifiedFrom = (head: string) => head.lastIndexOf(',"verified_data":');
  const [platformHead, meHead] = [parts[0].toString('utf8'), parts[1].toString('utf8')];
  parts[1] = Buffer.from(meHead.slice(0, verifiedFrom(meHead)) + platformHead.slice(verifiedFrom(platformHead)));
  return recordOfParts(parts);
}
