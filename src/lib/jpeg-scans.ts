const START_OF_SCAN = Buffer.from([0xff, 0xda]);

/**
 * Whether a JPEG may hold more than `limit` scans, told without decoding: every scan starts with the
 * marker X'FF' X'DA' (T.81 B.1.1.2), and in entropy-coded data an X'FF' is always followed by a stuffed
 * X'00' or a restart marker (F.1.2.3), so no scan's data looks like one. Marker segments' payloads
 * (EXIF, ICC) are not stuffed and may hold the two bytes by chance: those count too, so the markers
 * counted are never fewer than the scans. Counting stops past the limit: a file of a dozen bytes a scan
 * holds thousands.
 */
export function mayHoldMoreScans(bytes: Uint8Array, limit: number): boolean {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = -START_OF_SCAN.length;
  for (let scans = 0; scans <= limit; scans++) {
    at = data.indexOf(START_OF_SCAN, at + START_OF_SCAN.length);
    if (at === -1) return false;
  }
  return true;
}
