import { notFound, validationError } from '../../lib/errors.js';
import { jsonBytes, ok, type Reply } from '../../http/reply.js';
import type { FieldSpec } from '../applications/schemas.js';
import type { FileDescriptor } from './profile-change.js';
import { holdsFile, isMediaType, isServedImageType, type PreviewSize, type ProfileFiles } from './profile-files.js';

/** A profile's prepared bytes as the answer; 404 `E_USER_NOT_FOUND` when there are none. */
export function profileReply(bytes: Uint8Array | undefined, userId: string): Reply {
  if (!bytes) throw notFound('user', userId);
  return jsonBytes(bytes);
}

/** Uploaded bytes are served as data, never as a page of this origin. */
const FILE_HEADERS = { 'content-security-policy': "default-src 'none'; sandbox" };

/**
 * `GET …/data/fields/{field}`: `{value}`, or for `image`/`file` fields the stored bytes with their
 * content type (`preview` answers a WebP thumbnail of an image).
 */
export async function fieldReply(
  files: ProfileFiles,
  where: { appId: string; userId: string; field: string },
  spec: FieldSpec | undefined,
  value: unknown,
  preview: PreviewSize | undefined,
): Promise<Reply> {
  const { appId, userId, field } = where;
  if (value === undefined) throw notFound('field', field);
  if (preview !== undefined && spec?.type !== 'image') {
    throw validationError({ preview: ['previews exist for image fields only'] });
  }
  const file = holdsFile(spec, value) ? files.read(appId, userId, field) : undefined;
  // A value stored before the field held files (a text, or JSON of a file's shape whose bytes were never
  // stored) is no file: answered as it is, and no picture to draw.
  if (!file || file.sha256 !== (value as FileDescriptor).sha256) {
    if (preview !== undefined) throw validationError({ preview: ['the field holds no stored file'] });
    return ok({ value });
  }
  if (preview !== undefined) {
    const thumbnail = await files.preview({ appId, userId, field }, file, preview);
    return { status: 200, bytes: thumbnail.bytes, contentType: thumbnail.contentType, headers: FILE_HEADERS };
  }
  return {
    status: 200,
    bytes: file.bytes,
    // Stored before content types were checked at upload: never echoed unless it is one.
    contentType: isMediaType(file.content_type) ? file.content_type : 'application/octet-stream',
    headers: {
      ...FILE_HEADERS,
      etag: `"${file.sha256}"`,
      // By what the bytes were checked as at upload, not only the field's type now: it may have changed since,
      // and a `file` field takes anything labelled image/*, an SVG with scripts included. An image stored
      // before its type followed its bytes may be labelled as anything image/*.
      'content-disposition': spec!.type === 'image' && file.image === true && isServedImageType(file.content_type) ? 'inline' : 'attachment',
    },
  };
}
