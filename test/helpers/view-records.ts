import { accessPart } from '../../src/features/users/view-record.js';

/**
 * A user's view record as data format 5 laid it out: six u32 byte lengths, then the platform head,
 * the `/me` head, the tail and the schema stamp, the access marks as JSON text, and the groups part.
 */
export function format5Record(texts: ReadonlyArray<string | Uint8Array>, access: unknown, groups: Uint8Array): Buffer {
  const parts = [...texts.map((text) => Buffer.from(text)), Buffer.from(JSON.stringify(access)), groups];
  const header = Buffer.alloc(parts.length * 4);
  parts.forEach((part, i) => header.writeUInt32LE(part.length, i * 4));
  return Buffer.concat([header, ...parts]);
}

/** `record` (this build's layout) as format 5 kept it: the same parts, the access marks as JSON text. */
export function asFormat5Record(record: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 24;
  for (let i = 0; i < 6; i++) parts.push(record.subarray(at, (at += record.readUInt32LE(i * 4))));
  return format5Record(parts.slice(0, 4), accessPart(record), parts[5]);
}
