import { crc32, deflateSync } from 'node:zlib';

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

/** A grayscale PNG of `bitDepth` bits a pixel whose image data is `idat` (filter bytes included), deflated. */
function grayPng(width: number, height: number, bitDepth: number, idat: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([bitDepth, 0], 8);
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(idat)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A PNG whose header names `width` × `height` pixels and whose data holds almost none: refused once decoded. */
export const pngHeaderOnly = (width: number, height: number) => grayPng(width, height, 8, Buffer.alloc(64));

/** A whole black PNG of 1-bit pixels: a few kB even at 50 MP, quick to build, and a real decode. */
export const blackPng = (width: number, height: number) => grayPng(width, height, 1, Buffer.alloc(height * (1 + Math.ceil(width / 8))));
