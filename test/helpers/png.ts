import { crc32 } from 'node:zlib';

/** The 8 bytes every PNG file starts with. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One PNG chunk (length, type, data, CRC), for files no encoder would write. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const chunk = Buffer.alloc(typed.length + 8);
  chunk.writeUInt32BE(data.length);
  typed.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(typed), chunk.length - 4);
  return chunk;
}
