import t from 'tap';
import { mayHoldMoreScans } from '../../src/lib/jpeg-scans.js';
import { manyScanJpeg, segment, startOfScanBytes, twoScans, withSegments } from '../helpers/jpeg.js';

const SOI = [0xff, 0xd8];
const EOI = [0xff, 0xd9];
/** A Start Of Scan of one component, its header's length right (8), as libjpeg requires. */
const SOS = [0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00];
const jpeg = (...parts: number[][]) => Uint8Array.from(parts.flat());
const scansCounted = (bytes: Uint8Array) => {
  let limit = 0;
  while (mayHoldMoreScans(bytes, limit)) limit++;
  return limit;
};

t.test('the scans of a JPEG are counted, and counting stops past the limit', async (t) => {
  t.equal(scansCounted(twoScans), 2);
  t.ok(mayHoldMoreScans(manyScanJpeg(65), 64));
  t.notOk(mayHoldMoreScans(manyScanJpeg(64), 64));
  t.ok(mayHoldMoreScans(manyScanJpeg(100_000), 64));
});

t.test('Start Of Scan bytes in the payload of an APPn or COM segment are no scans', async (t) => {
  const exif = segment(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), startOfScanBytes(30_000)]));
  const comment = segment(0xfe, startOfScanBytes(100));
  t.equal(scansCounted(withSegments(twoScans, exif, comment)), 2);
});

t.test('in entropy-coded data, stuffed bytes and restart markers end no scan; a Start Of Scan after fill bytes is one', async (t) => {
  const data = [0x12, 0xff, 0x00, 0xda, 0xff, 0xd0, 0xda, 0x34, 0xff, 0xff, 0x00, 0xda, 0xff, 0xd7];
  t.equal(scansCounted(jpeg(SOI, SOS, data, EOI)), 1);
  t.equal(scansCounted(jpeg(SOI, SOS, data, [0xff, 0xff], SOS, data, EOI)), 2);
});

t.test('bytes that are no marker between segments are passed over to the next marker, as libjpeg does', async (t) => {
  t.equal(scansCounted(jpeg(SOI, [0x01, 0x02, 0xda, 0xff, 0x00, 0xda], SOS, [0x55], EOI)), 1);
});

t.test('a marker libjpeg reads no length of is no segment: what would be its length hides no scan', async (t) => {
  // A reserved code, a restart and TEM, each followed by bytes that would make a length of 10.
  for (const code of [0x02, 0xd3, 0x01]) t.equal(scansCounted(jpeg(SOI, [0xff, code, 0x00, 0x0a], SOS, [0x55], EOI)), 1, `X'${code.toString(16)}'`);
});

t.test('a length below 2 skips nothing past itself, as libjpeg skips it', async (t) => {
  for (const length of [0, 1]) t.equal(scansCounted(jpeg(SOI, [0xff, 0xe1, 0x00, length], SOS, [0x55], EOI)), 1);
});

t.test('nothing after End Of Image counts: libjpeg decodes no further', async (t) => {
  t.equal(scansCounted(Buffer.concat([twoScans, manyScanJpeg(100)])), 2, 'an appended image (a gain map)');
});

t.test('a truncated JPEG is counted as far as it goes, without an error', async (t) => {
  const whole = manyScanJpeg(5);
  const markers = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1').split('\xff\xda').length - 1;
  const prefixes = Array.from({ length: whole.length + 1 }, (_, end) => whole.subarray(0, end));
  t.same(prefixes.map(scansCounted), prefixes.map(markers), 'every prefix of a JPEG of 5 scans');
  t.equal(scansCounted(jpeg(SOI, [0xff, 0xe1, 0x7f, 0xff], [1, 2, 3])), 0, 'a segment longer than the file');
});
