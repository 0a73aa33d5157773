import { readFileSync } from 'node:fs';

/**
 * A flat grey 256 × 256 progressive JPEG of two scans, a DC one and one of AC 1–63 at full precision
 * (Ah = Al = 0), made by libjpeg-turbo 2.1.5's
 * `cjpeg -grayscale -optimize -scans SCRIPT` with SCRIPT `0: 0 0 0 0; 0: 1 63 0 0;`.
 */
export const twoScans = readFileSync(new URL('../fixtures/gray-two-scans.jpg', import.meta.url));
const SOS = Buffer.from([0xff, 0xda]);

/**
 * The fixture with its AC scan sent `scans - 1` times: each copy makes libjpeg walk every block again,
 * and libjpeg takes the repeats without a warning (the coefficients are at the precision the scan expects).
 */
export function manyScanJpeg(scans: number): Buffer {
  const end = twoScans.length - 2; // EOI
  const acScan = twoScans.subarray(twoScans.lastIndexOf(SOS), end);
  return Buffer.concat([twoScans.subarray(0, end), ...Array<Buffer>(scans - 2).fill(acScan), twoScans.subarray(end)]);
}

/** A marker segment: X'FF', its code, then its length (which counts itself) and `payload`. */
export const segment = (code: number, payload: Uint8Array): Buffer =>
  Buffer.concat([Buffer.from([0xff, code, (payload.length + 2) >> 8, (payload.length + 2) & 0xff]), payload]);

/** `jpeg` with `segments` inserted right after its Start Of Image, where encoders write APPn segments. */
export const withSegments = (jpeg: Uint8Array, ...segments: Buffer[]): Buffer => Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);

/** `count` Start Of Scan markers' bytes in a row, as binary metadata may hold them by chance. */
export const startOfScanBytes = (count: number): Buffer => Buffer.from(Array.from({ length: count }, () => [0xff, 0xda]).flat());
