const EOI = 0xd9;
const SOS = 0xda;
/**
 * The markers libjpeg reads a length of (T.81 B.1.1.4) and skips the segment by: frames and tables
 * (SOFn, DHT, DAC), SOS, DQT, DNL, DRI, APPn and COM. It reads none of the others' (SOI, RSTn and TEM
 * have none; an unknown one is an error, or skipped as a marker alone while looking for a restart), and
 * neither does the walk: a length it read where libjpeg reads none could hide scans from it.
 */
const hasLength = (code: number) => (code >= 0xc0 && code <= 0xcf) || (code >= 0xda && code <= 0xdd) || (code >= 0xe0 && code <= 0xef) || code === 0xfe;

/**
 * Whether a JPEG may hold more than `limit` scans, told without decoding: its markers are walked as
 * libjpeg reads them (jdmarker.c), and each Start Of Scan (X'FF' X'DA') counts. A marker segment's
 * payload (EXIF, ICC, a comment) is skipped by its length, so the `FF DA` bytes it may hold by chance
 * are not scans; a scan's entropy-coded data is read up to the next marker, which no X'FF' of the data
 * looks like (a stuffed X'00' follows it, T.81 F.1.2.3) and restart markers do not end. Between
 * markers, as libjpeg does, X'FF' fill bytes are skipped and so are bytes that are no marker, looking
 * for the next. The walk ends at End Of Image: libjpeg decodes no further (an appended gain map is
 * another image). A truncated file holds no more scans than counted: libjpeg could not read them either.
 * Counting stops past the limit: a file of a dozen bytes a scan holds thousands.
 */
export function mayHoldMoreScans(bytes: Uint8Array, limit: number): boolean {
  let scans = 0;
  for (let at = nextMarkerCode(bytes, 0); at !== -1; ) {
    const code = bytes[at]!;
    if (code === EOI) return false;
    if (code === SOS && ++scans > limit) return true;
    if (!hasLength(code)) {
      at = nextMarkerCode(bytes, at + 1);
      continue;
    }
    if (at + 3 > bytes.length) return false;
    const length = (bytes[at + 1]! << 8) | bytes[at + 2]!;
    // libjpeg skips a length below 2 (a bogus one) as if it were 2: nothing past the length itself.
    at = nextMarkerCode(bytes, at + 1 + Math.max(length, 2));
  }
  return false;
}

/**
 * Where the code of the first marker at or after `from` is, or -1: a byte after an X'FF' that is
 * neither X'00' (an X'FF' X'00' is a stuffed data byte) nor X'FF' (a fill byte). Read byte by byte, which
 * takes about 20 ms for 10 MiB here whatever the bytes: a native search per X'FF' took 200 ms on data stuffed throughout.
 */
function nextMarkerCode(bytes: Uint8Array, from: number): number {
  let previous = -1;
  for (let at = from; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (previous === 0xff && byte !== 0x00 && byte !== 0xff) return at;
    previous = byte;
  }
  return -1;
}
