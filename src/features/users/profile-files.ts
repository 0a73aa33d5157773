import { createHash } from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import type { Logger } from 'pino';
import { ApiError, unavailable, validationError } from '../../lib/errors.js';
import { Gate } from '../../lib/gate.js';
import { mayHoldMoreScans } from '../../lib/jpeg-scans.js';
import type { FilePart } from '../../http/context.js';
import type { Turn } from '../../runtime/runtime.js';
import { HIGH_KEY, type Database, type Key, type Store } from '../../storage/store.js';
import type { ProfileData } from '../../../machines/user.machine.js';
import type { FieldSpec } from '../applications/schemas.js';
import { isFileField, type FileDescriptor, type Upload } from './profile-change.js';

export const PREVIEW_SIZES = { small: 128, medium: 256, large: 512 } as const;
export type PreviewSize = keyof typeof PREVIEW_SIZES;
const PREVIEW_TYPE = 'image/webp';

interface StoredFile {
  content_type: string;
  sha256: string;
  bytes: Uint8Array;
  /** Checked as a raster image at upload; absent for a `file` field's upload (and files stored before it was kept). */
  image?: true;
}

interface StoredPreview {
  /** The file the preview was made from: a preview of older bytes is stale. */
  sha256: string;
  bytes: Uint8Array;
}

export function isFileDescriptor(value: unknown): value is FileDescriptor {
  const d = value as FileDescriptor | undefined;
  return typeof d === 'object' && d !== null && typeof d.sha256 === 'string' && typeof d.content_type === 'string';
}

/** Whether a field's value names a stored file: outside `image`/`file` fields a value of that shape is only the client's JSON. */
export const holdsFile = (spec: FieldSpec | undefined, value: unknown): value is FileDescriptor => isFileField(spec) && isFileDescriptor(value);

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** RFC 9110 §8.3.1 `type/subtype` with parameters: a file's type goes back out as a response header. */
const MEDIA_TYPE = new RegExp(String.raw`^${TOKEN}/${TOKEN}(?:[ \t]*;[ \t]*${TOKEN}=(?:${TOKEN}|"[^"\\\x00-\x1f\x7f]*"))*$`);
const MEDIA_TYPE_LIMIT = 255;

export const isMediaType = (value: string) => value.length <= MEDIA_TYPE_LIMIT && MEDIA_TYPE.test(value);

/**
 * Vector images are drawn, and a drawing can be made to take seconds of CPU (nested `<use>`), besides
 * carrying scripts: image fields take raster images only, and no preview is drawn of a vector one.
 */
const VECTOR_REFUSAL = 'must be a raster image (SVG is not taken)';

/**
 * Decoding costs time and memory by the pixel, not by the byte: a 750 kB PNG of 16000×16000 took
 * ~1.4 s of CPU and ~170 MB to preview. 50 MP still takes a 48 MP phone camera's photo.
 */
const IMAGE_PIXEL_LIMIT = 50_000_000;
const PIXEL_REFUSAL = `must be at most ${IMAGE_PIXEL_LIMIT / 1_000_000} megapixels`;
/**
 * Pixels one body's images may hold together, two of the largest: a 33 kB GIF of 49 MP took 0.7 to 1.7 s
 * to decode here, and a schema may have 200 image fields, so a body of small files could keep libuv's
 * threadpool (shared with WebCrypto and file I/O) busy for minutes.
 */
const BODY_PIXEL_BUDGET = 2 * IMAGE_PIXEL_LIMIT;
const BUDGET_REFUSAL = `takes the body's images past ${BODY_PIXEL_BUDGET / 1_000_000} megapixels in all`;
/**
 * Each scan of a progressive JPEG makes libjpeg walk the image's coefficients again, and a scan can be
 * a few dozen bytes: a 250 kB grey JPEG of 49 MP and 2000 scans took 8 s of CPU to decode here, one of
 * 10 MiB (138 000 scans) would take about 9 minutes, and the pixel limits do not see it (libjpeg-turbo's
 * advisory LJT-01-003; sharp's timeout does not interrupt it). Encoders write 6 to 10 (libjpeg's and
 * mozjpeg's progressive grey and colour JPEGs), 18 for CMYK, and 64 scans of that 49 MP JPEG took 0.27 s.
 */
const JPEG_SCAN_LIMIT = 64;
const SCAN_REFUSAL = `must be a JPEG of at most ${JPEG_SCAN_LIMIT} scans`;
/**
 * sharp's work runs on libuv's threadpool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which
 * lmdb-js's commits, WebCrypto and file I/O share: with 4 images decoding, a commit of any request
 * waited until one ended (2.7 s measured). At most this many run at once, the others wait for them.
 */
const DECODES_AT_ONCE = 2;
/**
 * Image tasks that may wait for those: past them a request is 503, as each waiting upload holds its
 * body (up to the multipart cap, 10 MiB by default) and a burst would queue without end. Eight waiting
 * are four rounds of two: a few seconds of 50 MP images (0.7 to 1.7 s each), less than one of photos.
 */
const DECODES_WAITING = 8;

/** The process's one gate of image work: every header read and decode, uploads and previews alike. */
export const imageDecodeGate = () =>
  new Gate(DECODES_AT_ONCE, DECODES_WAITING, () => unavailable('Too many images are waiting to be decoded; try again'));

/**
 * The type an image field's file is stored and served as is the one its bytes decode as, whatever the
 * uploader declared (PNG bytes labelled image/svg+xml would go out inline as SVG); other formats are refused.
 */
const RASTER_TYPES: Partial<Record<string, string>> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  tiff: 'image/tiff',
  heif: 'image/avif',
};
const FORMAT_REFUSAL = 'must be a JPEG, PNG, WebP, GIF, TIFF or AVIF image';

/** HEIF is a container: of its codecs this build of libvips decodes AV1 (AVIF) only. */
const servedImageType = ({ format, compression }: Metadata) => (format === 'heif' && compression !== 'av1' ? undefined : RASTER_TYPES[format]);

const SERVED_IMAGE_TYPES = new Set(Object.values(RASTER_TYPES));
/** Whether a stored image's type is one an upload could have been given: files stored before kept the declared one. */
export const isServedImageType = (contentType: string) => SERVED_IMAGE_TYPES.has(contentType);

/** The type `bytes` are served as and their pixels, read from the header alone, or why they are no image to decode; throws when unreadable. */
async function imageType(bytes: Uint8Array): Promise<{ contentType: string; pixels: number } | string> {
  // No limit on reading the header: sharp's own (about 268 MP) would call a larger image unreadable, not too large.
  const metadata = await sharp(bytes, { limitInputPixels: false }).metadata();
  if (metadata.format === 'svg') return VECTOR_REFUSAL;
  const contentType = servedImageType(metadata);
  if (!contentType) return FORMAT_REFUSAL;
  const { width = 0, height = 0 } = metadata;
  const pixels = width * height;
  if (pixels > IMAGE_PIXEL_LIMIT) return PIXEL_REFUSAL;
  if (metadata.format === 'jpeg' && mayHoldMoreScans(bytes, JPEG_SCAN_LIMIT)) return SCAN_REFUSAL;
  return { contentType, pixels };
}

const decoder = (bytes: Uint8Array) => sharp(bytes, { limitInputPixels: IMAGE_PIXEL_LIMIT });

const NOT_READABLE = 'is not a readable image';

/** Whether `bytes` decode whole, as a preview will decode them: the header alone passes a truncated file. */
const decodesWhole = (bytes: Uint8Array): Promise<boolean> =>
  decoder(bytes)
    .resize(PREVIEW_SIZES.small, PREVIEW_SIZES.small, { fit: 'inside' })
    .raw()
    .toBuffer()
    .then(
      () => true,
      () => false,
    );

/** A WebP preview of `bytes` within an `edge` square, or why they have none; throws when unreadable. */
async function drawPreview(bytes: Uint8Array, edge: number): Promise<Buffer | string> {
  const type = await imageType(bytes);
  if (typeof type === 'string') return type;
  return decoder(bytes).rotate().resize(edge, edge, { fit: 'inside', withoutEnlargement: true }).webp().toBuffer();
}

/** A file part named after an `image`/`file` field. */
export interface FileUpload {
  name: string;
  part: FilePart;
  spec: FieldSpec;
}

/** An upload checked as far as its header: `pixels` to decode (an image field's), none for a `file` field's. */
interface Inspected {
  upload: FileUpload;
  contentType: string;
  pixels?: number;
}

/** The upload as far as its header tells, or why it does not fit its field. */
async function inspect(upload: FileUpload, decodes: Gate): Promise<Inspected | string> {
  const { part, spec } = upload;
  if (part.data.length === 0) return 'the file is empty';
  if (!isMediaType(part.contentType)) return `must have a content type of the form type/subtype, at most ${MEDIA_TYPE_LIMIT} characters`;
  if (spec.type !== 'image') {
    // Type and subtype are case-insensitive (RFC 9110 §8.3.1): kept in lower case, as they are compared.
    const end = part.contentType.search(/[ \t;]|$/);
    return { upload, contentType: part.contentType.slice(0, end).toLowerCase() + part.contentType.slice(end) };
  }
  if (!part.contentType.toLowerCase().startsWith('image/')) return 'must be an image (content type image/*)';
  // Caught within the task: the gate's own refusal (a 503) is no fault of the image.
  const type = await decodes.run(() => imageType(part.data).catch(() => NOT_READABLE));
  return typeof type === 'string' ? type : { upload, ...type };
}

/** The image that takes a body's pixels past its budget, if one does. */
function budgetCrossing(inspected: Inspected[]): Inspected | undefined {
  let pixels = 0;
  return inspected.find((checked) => (pixels += checked.pixels ?? 0) > BODY_PIXEL_BUDGET);
}

const describe = (bytes: Buffer, contentType: string): FileDescriptor => ({
  content_type: contentType,
  size: bytes.length,
  sha256: createHash('sha256').update(bytes).digest('hex'),
});

const bytesId = (file: StoredFile) => `${file.sha256}:${file.bytes.length}`;
const previewRefusal = (refusal: string) => validationError({ preview: [`the stored file ${refusal}`] });
/** Undrawable files remembered: at about 200 bytes each, 2 MB at most. */
const UNDRAWABLE_LIMIT = 10_000;

/**
 * Bytes of `image`/`file` fields, kept out of the actor snapshots: `[appId, userId, field]` in
 * `user_files`, and thumbnails made on first request in `user_file_previews`.
 */
export class ProfileFiles {
  private readonly files: Database<StoredFile, Key>;
  private readonly previews: Database<StoredPreview, Key>;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    /** The process's `imageDecodeGate()`. */
    private readonly decodes: Gate,
  ) {
    this.files = store.db<StoredFile>('user_files');
    this.previews = store.db<StoredPreview>('user_file_previews');
    // libvips' operation cache (process-wide) answers an operation again on the same input, and no
    // buffer is decoded twice here (an upload's bytes are new, a preview's a fresh copy read from
    // LMDB): it could never hit, and would only hold up to 100 operations of past requests.
    sharp.cache(false);
  }

  /**
   * A body's uploads ready to store; each that does not fit its field is passed to `refuse`, and then none
   * is returned. Every header is read before anything is decoded, and nothing is unless every upload
   * passes it and the images hold at most BODY_PIXEL_BUDGET together; the image that takes them past it
   * is the one refused.
   */
  async prepareUploads(uploads: FileUpload[], refuse: (name: string, refusal: string) => void): Promise<Record<string, Upload>> {
    const inspected: Inspected[] = [];
    for (const upload of uploads) {
      const checked = await inspect(upload, this.decodes);
      if (typeof checked === 'string') refuse(upload.name, checked);
      else inspected.push(checked);
    }
    const crossing = budgetCrossing(inspected);
    if (crossing) refuse(crossing.upload.name, BUDGET_REFUSAL);
    if (crossing || inspected.length < uploads.length) return {};
    const prepared: Record<string, Upload> = {};
    for (const { upload, contentType, pixels } of inspected) {
      const { name, part } = upload;
      const descriptor = describe(part.data, contentType);
      if (pixels === undefined) {
        prepared[name] = { descriptor, bytes: part.data };
        continue;
      }
      if (await this.decodes.run(() => decodesWhole(part.data))) prepared[name] = { descriptor, bytes: part.data, image: true };
      else refuse(name, NOT_READABLE);
    }
    return prepared;
  }

  read(appId: string, userId: string, field: string): StoredFile | undefined {
    return this.files.get([appId, userId, field]);
  }

  /** Stages uploads, and drops the files whose field no longer names the same bytes. */
  stage(turn: Turn, appId: string, userId: string, before: ProfileData, after: ProfileData, uploads: Record<string, Upload>): void {
    // Every stored file is described in `data`, so `before` names every file there is.
    for (const field in before) {
      const old = before[field];
      if (!isFileDescriptor(old)) continue;
      const kept = isFileDescriptor(after[field]) && after[field].sha256 === old.sha256;
      if (!kept && !Object.hasOwn(uploads, field)) this.drop(turn, appId, userId, field);
    }
    for (const [field, upload] of Object.entries(uploads)) {
      const stored: StoredFile = { content_type: upload.descriptor.content_type, sha256: upload.descriptor.sha256, bytes: upload.bytes };
      if (upload.image) stored.image = true;
      turn.put(this.files, [appId, userId, field], stored);
      for (const size in PREVIEW_SIZES) turn.del(this.previews, [appId, userId, field, size]);
    }
  }

  dropAll(turn: Turn, appId: string, userId: string): void {
    for (const key of this.files.getKeys({ start: [appId, userId, ''], end: [appId, userId, HIGH_KEY] })) {
      this.drop(turn, appId, userId, (key as Key[])[2] as string);
    }
  }

  /**
   * Previews being drawn, by the file's bytes and the size: requests that find none cached while one
   * is drawn wait for it rather than each decode the image again (reads are not rate limited, and an
   * image of up to 50 MP takes about a second of CPU to draw).
   */
  private readonly drawing = new Map<string, Promise<Buffer | string>>();

  /**
   * Why stored files have no preview, by their SHA-256 and size: a refusal is the bytes' own, so a file
   * is decoded in vain once, not on every request. The oldest are forgotten past the limit.
   */
  private readonly undrawable = new Map<string, string>();

  /** A WebP thumbnail of `file` (as just read from `where`) within the size's square, made once per file and cached. */
  async preview(
    where: { appId: string; userId: string; field: string },
    file: StoredFile,
    size: PreviewSize,
  ): Promise<{ bytes: Uint8Array; contentType: string }> {
    const key: Key = [where.appId, where.userId, where.field, size];
    const cached = this.previews.get(key);
    if (cached && cached.sha256 === file.sha256) return { bytes: cached.bytes, contentType: PREVIEW_TYPE };
    const known = this.undrawable.get(bytesId(file));
    if (known !== undefined) throw previewRefusal(known);
    const id = JSON.stringify(key) + file.sha256;
    let drawing = this.drawing.get(id);
    if (!drawing) {
      drawing = this.draw(key, file, PREVIEW_SIZES[size]).finally(() => this.drawing.delete(id));
      this.drawing.set(id, drawing);
    }
    const drawn = await drawing;
    if (typeof drawn === 'string') throw previewRefusal(drawn);
    return { bytes: drawn, contentType: PREVIEW_TYPE };
  }

  /** The preview drawn and cached, or why the file has none. */
  private async draw(key: Key, file: StoredFile, edge: number): Promise<Buffer | string> {
    const [appId, userId, field] = key as [string, string, string];
    // Caught within the task: the gate's own refusal (a 503) is no fault of the file, and not remembered.
    const drawn = await this.decodes.run(() =>
      drawPreview(file.bytes, edge).catch((error: unknown) => {
        // Uploads to an image field are checked: one that decoded then and does not now was damaged where
        // it is kept (a 500, logged), not sent so. A file that was not (the field's type changed since) can be anything.
        if (file.image) throw error;
        return NOT_READABLE;
      }),
    );
    if (typeof drawn === 'string') return this.rememberUndrawable(file, drawn);
    const bytes = drawn;
    await this.store
      .commit(() => {
        // Only while the file is still the one the preview was made from.
        if (this.read(appId, userId, field)?.sha256 === file.sha256) this.previews.put(key, { sha256: file.sha256, bytes });
      })
      .catch((error: unknown) => {
        // Only a cache: a preview that cannot be kept (a full disk) is served all the same, and drawn again next time.
        if (!(error instanceof ApiError && error.status === 503)) throw error;
        this.logger.warn({ err: error.cause }, 'a preview could not be kept: it is drawn again on its next request');
      });
    return bytes;
  }

  private rememberUndrawable(file: StoredFile, refusal: string): string {
    if (this.undrawable.size >= UNDRAWABLE_LIMIT) this.undrawable.delete(this.undrawable.keys().next().value!);
    this.undrawable.set(bytesId(file), refusal);
    return refusal;
  }

  private drop(turn: Turn, appId: string, userId: string, field: string): void {
    turn.del(this.files, [appId, userId, field]);
    for (const size in PREVIEW_SIZES) turn.del(this.previews, [appId, userId, field, size]);
  }
}
