import t from 'tap';
import sharp from 'sharp';
import { createHash } from 'node:crypto';
import { startServerWithSchema } from '../../helpers/schema.js';
import { startServer } from '../../helpers/server.js';
import { blackPng, pngHeaderOnly } from '../../helpers/png.js';
import { manyScanJpeg, segment, startOfScanBytes, withSegments } from '../../helpers/jpeg.js';
import { storeDigest } from '../../helpers/store-digest.js';
import { tokenFor } from '../../helpers/tokens.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';

const schema = {
  fields: {
    avatar: { type: 'image' as const, user_readable: true, user_writable: true },
    contract: { type: 'file' as const },
    nickname: { type: 'string' as const, user_readable: true, user_writable: true },
  },
  allow_unknown_fields: false,
};

const png = (width: number, height: number, color: string) =>
  sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function form(parts: Record<string, string | { bytes: Buffer; type: string; name?: string }>): FormData {
  const body = new FormData();
  for (const [name, part] of Object.entries(parts)) {
    if (typeof part === 'string') body.set(name, part);
    else body.set(name, new Blob([new Uint8Array(part.bytes)], { type: part.type }), part.name ?? `${name}.bin`);
  }
  return body;
}

t.test('a multipart image upload is stored apart from the profile and served with three cached previews', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const appId = server.app.id;
  const base = `/applications/${appId}/users/f1/data`;
  const image = await png(800, 600, '#c00');
  const upload = await server.request('PUT', base, {
    app: server.app,
    rawBody: form({
      data: JSON.stringify({ nickname: 'pic' }),
      attributes: JSON.stringify({ 'ui:theme': ['dark'] }),
      avatar: { bytes: image, type: 'image/png', name: 'me.png' },
    }),
  });
  t.equal(upload.status, 200, upload.text);
  const descriptor = { content_type: 'image/png', size: image.length, sha256: sha256(image) };
  t.same(upload.body.data, { nickname: 'pic', avatar: descriptor, user_id: 'f1' });
  t.same(upload.body.attributes, { 'ui:theme': ['dark'] });
  t.same(server.deps.users.require(appId, 'f1').context.data.avatar, descriptor, 'the snapshot holds only the descriptor');

  const original = await fetch(`${server.url}${base}/fields/avatar`, {
    headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret },
  });
  t.equal(original.status, 200);
  t.equal(original.headers.get('content-type'), 'image/png');
  t.ok(Buffer.from(await original.arrayBuffer()).equals(image), 'the bytes come back as uploaded');

  const previews = server.deps.store.db('user_file_previews');
  for (const [size, edge] of [['small', 128], ['medium', 256], ['large', 512]] as const) {
    const res = await fetch(`${server.url}${base}/fields/avatar?preview=${size}`, {
      headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret },
    });
    t.equal(res.status, 200, size);
    t.equal(res.headers.get('content-type'), 'image/webp');
    const bytes = Buffer.from(await res.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    t.equal(meta.format, 'webp');
    t.same([meta.width, meta.height], [edge, (edge * 3) / 4], `${size} fits ${edge}px, aspect kept`);
    t.equal(previews.get([appId, 'f1', 'avatar', size])?.sha256, descriptor.sha256, `${size} is cached`);
    t.ok(Buffer.from(previews.get([appId, 'f1', 'avatar', size]).bytes).equals(bytes));
  }

  const replacement = await png(300, 300, '#00c');
  const replaced = await server.request('PUT', base, {
    app: server.app,
    rawBody: form({ avatar: { bytes: replacement, type: 'image/png' } }),
  });
  t.equal(replaced.status, 200, replaced.text);
  t.equal(replaced.body.data.avatar.sha256, sha256(replacement));
  t.equal(replaced.body.data.nickname, 'pic', 'a PUT of only a file part keeps the rest of data');
  t.equal(previews.get([appId, 'f1', 'avatar', 'small']), undefined, 'previews of the old file are dropped');
  const fresh = await fetch(`${server.url}${base}/fields/avatar?preview=small`, {
    headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret },
  });
  const freshMeta = await sharp(Buffer.from(await fresh.arrayBuffer())).metadata();
  t.same([freshMeta.width, freshMeta.height], [128, 128], 'the preview is of the new image');

  const bad = await server.request('GET', `${base}/fields/avatar?preview=huge`, { app: server.app });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'E_VALIDATION');
});

t.test('file fields, JSON writes of file fields, removal and deletion', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const appId = server.app.id;
  const base = `/applications/${appId}/users/f2/data`;
  const pdf = Buffer.from('%PDF-1.4 pretend document');
  const image = await png(10, 10, '#0c0');
  const created = await server.request('PUT', base, {
    app: server.app,
    rawBody: form({
      contract: { bytes: pdf, type: 'application/pdf' },
      avatar: { bytes: image, type: 'image/png' },
    }),
  });
  t.equal(created.status, 200, created.text);
  const file = await fetch(`${server.url}${base}/fields/contract`, {
    headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret },
  });
  t.equal(file.headers.get('content-type'), 'application/pdf');
  t.equal(file.headers.get('content-disposition'), 'attachment');
  t.match(file.headers.get('content-security-policy'), /sandbox/);
  t.ok(Buffer.from(await file.arrayBuffer()).equals(pdf));
  const noPreview = await server.request('GET', `${base}/fields/contract?preview=small`, { app: server.app });
  t.equal(noPreview.status, 400, 'previews are for images');

  const data = created.body.data;
  const roundTrip = await server.request('PUT', base, { app: server.app, body: { data } });
  t.equal(roundTrip.status, 200, 'a descriptor sent back unchanged keeps the file');
  const forged = await server.request('PATCH', base, { app: server.app, body: { data: { avatar: { ...data.avatar, sha256: 'f'.repeat(64) } } } });
  t.equal(forged.status, 400);
  t.equal(forged.body.code, 'E_USER_UPDATE_FAILED');
  t.ok(forged.body.field_errors.avatar);

  const notImage = await server.request('PATCH', base, { app: server.app, rawBody: form({ avatar: { bytes: pdf, type: 'image/png' } }) });
  t.equal(notImage.status, 400);
  t.ok(notImage.body.field_errors.avatar);
  const wrongType = await server.request('PATCH', base, { app: server.app, rawBody: form({ avatar: { bytes: pdf, type: 'application/pdf' } }) });
  t.equal(wrongType.status, 400);
  const unknownPart = await server.request('PATCH', base, { app: server.app, rawBody: form({ nickname: { bytes: pdf, type: 'application/pdf' }, extra: 'x' }) });
  t.equal(unknownPart.status, 400);
  t.same(Object.keys(unknownPart.body.field_errors).sort(), ['extra', 'nickname']);
  const badJson = await server.request('PATCH', base, { app: server.app, rawBody: form({ data: '{' }) });
  t.equal(badJson.status, 400);
  t.ok(badJson.body.field_errors.data);

  const files = server.deps.store.db('user_files');
  const removed = await server.request('PATCH', base, { app: server.app, body: { data: { contract: null } } });
  t.equal(removed.status, 200);
  t.notOk('contract' in removed.body.data);
  t.equal(files.get([appId, 'f2', 'contract']), undefined, 'the bytes go with the field');
  t.equal((await server.request('GET', `${base}/fields/contract`, { app: server.app })).body.code, 'E_FIELD_NOT_FOUND');

  const replacedWithout = await server.request('PUT', base, { app: server.app, body: { data: {} } });
  t.equal(replacedWithout.status, 200);
  t.equal(files.get([appId, 'f2', 'avatar']), undefined, 'a PUT without the field drops its file');

  await server.request('PATCH', base, { app: server.app, rawBody: form({ avatar: { bytes: image, type: 'image/png' } }) });
  t.ok(files.get([appId, 'f2', 'avatar']));
  t.same(verifyStore(server.deps, allInvariants).problems, [], 'stored files are the ones the profiles describe');
  t.equal((await server.request('DELETE', base, { app: server.app })).status, 204);
  t.equal(files.get([appId, 'f2', 'avatar']), undefined, 'deleting the user deletes its files');
});

t.test('/me uploads through the field endpoint; platform field reads of a disabled user', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const appId = server.app.id;
  const { userId, token } = await tokenFor(server, { email: 'pic@example.com' });
  const image = await png(40, 20, '#888');
  const field = `/me/applications/${appId}/data/fields/avatar`;
  const put = await server.request('PUT', field, { token, rawBody: form({ value: { bytes: image, type: 'image/png' } }) });
  t.equal(put.status, 200, put.text);
  t.equal(put.body.data.avatar.sha256, sha256(image));
  const got = await fetch(`${server.url}${field}?preview=medium`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(got.status, 200);
  const meta = await sharp(Buffer.from(await got.arrayBuffer())).metadata();
  t.same([meta.width, meta.height], [40, 20], 'never enlarged');
  const contract = await server.request('PUT', `/me/applications/${appId}/data/fields/contract`, {
    token,
    rawBody: form({ value: { bytes: Buffer.from('x'), type: 'application/pdf' } }),
  });
  t.equal(contract.status, 400, 'the user may not write the contract');

  const platformField = `/applications/${appId}/users/${userId}/data/fields/email`;
  t.same((await server.request('GET', platformField, { app: server.app })).body, { value: 'pic@example.com' });
  await server.request('POST', `/applications/${appId}/users/${userId}/state`, { app: server.app, body: { state: 'disabled' } });
  t.same((await server.request('GET', platformField, { app: server.app })).body, { value: null });
  const strict = await server.request('GET', `${platformField}?fail_on_error=true`, { app: server.app });
  t.equal(strict.status, 403);
  t.equal(strict.body.code, 'E_FORBIDDEN');
  const missing = await server.request('GET', `/applications/${appId}/users/${userId}/data/fields/nickname`, { app: server.app });
  t.equal(missing.status, 404);
  t.equal(missing.body.code, 'E_FIELD_NOT_FOUND');
});

t.test('PUT /me/applications/{app}/data takes multipart/form-data (SPEC): JSON parts data and attributes, and a file part', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { userId, token } = await tokenFor(server, { email: 'ada@example.com' });
  const me = `/me/applications/${server.app.id}/data`;
  const image = await png(64, 48, '#0c0');
  const res = await server.request('PUT', me, {
    token,
    rawBody: form({
      data: JSON.stringify({ nickname: 'ada' }),
      attributes: JSON.stringify({ 'ui:theme': ['dark'] }),
      avatar: { bytes: image, type: 'image/png' },
    }),
  });
  t.equal(res.status, 200, res.text);
  t.match(res.body.data, { nickname: 'ada', avatar: { content_type: 'image/png', size: image.length, sha256: sha256(image) }, user_id: userId });
  t.same(res.body.attributes, { 'ui:theme': ['dark'] });
  const read = await server.request('GET', me, { token });
  t.same([read.body.data, read.body.attributes], [res.body.data, res.body.attributes], 'a read shows what the write answered');
});

t.test('platform field PUT: JSON and multipart value, unknown fields', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f4/data`;
  await server.request('PUT', base, { app: server.app, body: { data: {} } });
  const json = await server.request('PUT', `${base}/fields/nickname`, { app: server.app, body: { value: 'nick' } });
  t.equal(json.status, 200);
  t.equal(json.body.data.nickname, 'nick');
  const text = await server.request('PUT', `${base}/fields/nickname`, { app: server.app, rawBody: form({ value: 'other' }) });
  t.equal(text.body.data.nickname, 'other');
  t.same((await server.request('GET', `${base}/fields/nickname`, { app: server.app })).body, { value: 'other' });
  const filePart = await server.request('PUT', `${base}/fields/nickname`, {
    app: server.app,
    rawBody: form({ value: { bytes: Buffer.from('not text'), type: 'image/jpeg' } }),
  });
  t.equal(filePart.status, 400, 'a file part is no value for a text field');
  t.ok(filePart.body.field_errors.nickname);
  t.same((await server.request('GET', `${base}/fields/nickname`, { app: server.app })).body, { value: 'other' }, 'unchanged');
  const unknown = await server.request('PUT', `${base}/fields/unknown`, { app: server.app, body: { value: 1 } });
  t.equal(unknown.status, 400, 'a field the schema does not allow is refused as in a PATCH');
  t.same(unknown.body.field_errors, { unknown: ['unknown field: the application schema does not allow unknown fields'] });
  const missingUser = await server.request('PUT', `/applications/${server.app.id}/users/nobody/data/fields/nickname`, { app: server.app, body: { value: 'x' } });
  t.equal(missingUser.status, 404);
  t.equal(missingUser.body.code, 'E_USER_NOT_FOUND');
});

t.test('acknowledged profile and file writes are there after a restart on the same data', async (t) => {
  const dataDir = t.testdir();
  const first = await startServerWithSchema(t, schema, { dataDir });
  const app = first.app;
  const image = await png(64, 64, '#123');
  const base = `/applications/${app.id}/users/durable/data`;
  const put = await first.request('PUT', base, {
    app,
    rawBody: form({ data: JSON.stringify({ nickname: 'kept' }), avatar: { bytes: image, type: 'image/png' } }),
  });
  t.equal(put.status, 200);
  await first.close();

  const second = await startServer(t, { dataDir });
  const profile = await second.request('GET', base, { app });
  t.same(profile.body, put.body, 'the profile as acknowledged');
  const bytes = await fetch(`${second.url}${base}/fields/avatar`, {
    headers: { 'x-svc-app-key': app.key, 'x-svc-app-secret': app.secret },
  });
  t.ok(Buffer.from(await bytes.arrayBuffer()).equals(image), 'the file as uploaded');
});

t.test('a file field turned into an image field: what was uploaded before is no image to preview or show inline', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f5/data`;
  const page = Buffer.from('<html><script>alert(1)</script></html>');
  const uploaded = await server.request('PUT', base, { app: server.app, rawBody: form({ contract: { bytes: page, type: 'text/html' } }) });
  t.equal(uploaded.status, 200, uploaded.text);
  await server.deps.apps.update(server.app.id, { schema: { ...schema, fields: { ...schema.fields, contract: { type: 'image' } } } });

  for (const size of ['small', 'large']) {
    const preview = await server.request('GET', `${base}/fields/contract?preview=${size}`, { app: server.app });
    t.equal(preview.status, 400, preview.text);
    t.same(preview.body.field_errors, { preview: ['the stored file is not a readable image'] });
  }
  const file = await fetch(`${server.url}${base}/fields/contract`, {
    headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret },
  });
  t.equal(file.status, 200);
  t.equal(file.headers.get('content-disposition'), 'attachment', 'bytes uploaded as text/html are never shown inline');
});

t.test('a text field turned into an image field: its value is no file to preview', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f6/data`;
  t.equal((await server.request('PUT', base, { app: server.app, body: { data: { nickname: 'hello' } } })).status, 200);
  await server.deps.apps.update(server.app.id, { schema: { ...schema, fields: { ...schema.fields, nickname: { type: 'image', user_readable: true } } } });
  const preview = await server.request('GET', `${base}/fields/nickname?preview=small`, { app: server.app });
  t.equal(preview.status, 400, preview.text);
  t.same(preview.body.field_errors, { preview: ['the field holds no stored file'] });
  const value = await server.request('GET', `${base}/fields/nickname`, { app: server.app });
  t.same(value.body, { value: 'hello' }, 'without a preview the value is answered as it is');
});

t.test("an object field turned into an image field: a JSON value of a file's shape kept from before is no file either", async (t) => {
  const withPrefs = { ...schema, fields: { ...schema.fields, prefs: { type: 'object' as const, user_readable: true, user_writable: true } } };
  const server = await startServerWithSchema(t, withPrefs);
  const appId = server.app.id;
  const { userId, token } = await tokenFor(server, { email: 'kept-shape@example.com' });
  const lookalike = { content_type: 'image/png', size: 1, sha256: '0'.repeat(64) };
  t.equal((await server.request('PATCH', `/me/applications/${appId}/data`, { token, body: { data: { prefs: lookalike } } })).status, 200);
  await server.deps.apps.update(appId, { schema: { ...withPrefs, fields: { ...withPrefs.fields, prefs: { type: 'image', user_readable: true } } } });
  for (const base of [`/applications/${appId}/users/${userId}/data`, `/me/applications/${appId}/data`]) {
    const caller = base.startsWith('/me') ? { token } : { app: server.app };
    const value = await server.request('GET', `${base}/fields/prefs`, caller);
    t.equal(value.status, 200, `${base}: ${value.text}`);
    t.same(value.body, { value: lookalike }, 'the value is answered as it is, as a text kept from before is');
    const preview = await server.request('GET', `${base}/fields/prefs?preview=small`, caller);
    t.equal(preview.status, 400, preview.text);
    t.same(preview.body.field_errors, { preview: ['the field holds no stored file'] });
  }
});

t.test('an upload whose content type is no media type is refused: it would go back out as a response header', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f6/data`;
  const image = await png(10, 10, '#00c');
  for (const type of ['image/png\nSet-Cookie: injected=1', 'image/png\u0000', 'image', `image/${'p'.repeat(300)}`]) {
    const raw = `--b\r\nContent-Disposition: form-data; name="avatar"; filename="a.png"\r\nContent-Type: ${type}\r\n\r\n${image.toString('latin1')}\r\n--b--\r\n`;
    const res = await server.request('PUT', base, {
      app: server.app,
      rawBody: Buffer.from(raw, 'latin1'),
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
    });
    t.equal(res.status, 400, JSON.stringify(type));
    t.match(res.body.field_errors.avatar, [/^must have a content type of the form type\/subtype/]);
  }
  t.equal((await server.request('GET', base, { app: server.app })).status, 404, 'nothing was stored');
  // Raw: a Blob would lower-case the type itself.
  const part = (name: string) =>
    Buffer.concat([
      Buffer.from(`--b\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: Image/PNG; q="x Y"\r\n\r\n`),
      image,
      Buffer.from('\r\n'),
    ]);
  const fine = await server.request('PUT', base, {
    app: server.app,
    rawBody: Buffer.concat([part('contract'), part('avatar'), Buffer.from('--b--\r\n')]),
    headers: { 'content-type': 'multipart/form-data; boundary=b' },
  });
  t.equal(fine.status, 200, fine.text);
  t.equal(fine.body.data.contract.content_type, 'image/png; q="x Y"', 'type and subtype kept in lower case, parameters as given');
  t.equal(fine.body.data.avatar.content_type, 'image/png', "an image field's type is its format's");
});

t.test("an image field stores and serves the type its bytes decode as, not the uploader's: PNG bytes labelled SVG are a PNG", async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f30/data`;
  const headers = { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret };
  const formats = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', tiff: 'image/tiff', avif: 'image/avif' } as const;
  for (const [format, type] of Object.entries(formats)) {
    const bytes = await sharp({ create: { width: 12, height: 8, channels: 3, background: '#c60' } })
      .toFormat(format as keyof typeof formats)
      .toBuffer();
    for (const declared of ['image/svg+xml', 'image/jpeg; charset=utf-8']) {
      const res = await server.request('PATCH', base, { app: server.app, rawBody: form({ avatar: { bytes, type: declared } }) });
      t.equal(res.status, 200, res.text);
      t.same(res.body.data.avatar, { content_type: type, size: bytes.length, sha256: sha256(bytes) }, `${format} labelled ${declared}`);
      const file = await fetch(`${server.url}${base}/fields/avatar`, { headers });
      t.equal(file.headers.get('content-type'), type, `${format} is served as ${type}`);
      t.equal(file.headers.get('content-disposition'), 'inline');
      t.ok(Buffer.from(await file.arrayBuffer()).equals(bytes));
    }
  }
  const page = await server.request('PATCH', base, { app: server.app, rawBody: form({ avatar: { bytes: Buffer.from('<html></html>'), type: 'image/png' } }) });
  t.equal(page.status, 400, 'bytes that decode as no image are refused, whatever their label');
  t.same(page.body.field_errors, { avatar: ['is not a readable image'] });
  t.equal((await server.request('GET', base, { app: server.app })).body.data.avatar.content_type, 'image/avif', 'and change nothing');
});

t.test('an image stored before its type followed its bytes, under the type its uploader declared, is served as an attachment', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const appId = server.app.id;
  const base = `/applications/${appId}/users/f31/data`;
  const image = await png(10, 10, '#0c0');
  t.equal((await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: image, type: 'image/png' } }) })).status, 200);
  const files = server.deps.store.db('user_files');
  // As an upload labelled image/svg+xml was stored then.
  await server.deps.store.commit(() => files.put([appId, 'f31', 'avatar'], { ...files.get([appId, 'f31', 'avatar']), content_type: 'image/svg+xml' }));
  const file = await fetch(`${server.url}${base}/fields/avatar`, { headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret } });
  t.equal(file.status, 200);
  t.equal(file.headers.get('content-type'), 'image/svg+xml');
  t.equal(file.headers.get('content-disposition'), 'attachment', 'never shown inline as what it is not');
});

t.test('an image is decoded whole at upload: a truncated one is refused, not accepted and then failing every preview', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f7/data`;
  const image = await sharp({ create: { width: 400, height: 400, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } } }).png().toBuffer();
  const truncated = image.subarray(0, Math.floor(image.length / 2));
  const res = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: truncated, type: 'image/png' } }) });
  t.equal(res.status, 400, res.text);
  t.same(res.body.field_errors, { avatar: ['is not a readable image'] });
});

t.test("sharp's operation cache keeps nothing of the images decoded, refused ones included: no buffer is decoded twice", async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f8/data`;
  const image = await png(600, 400, '#0a0');
  const truncated = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: image.subarray(0, image.length >> 1), type: 'image/png' } }) });
  t.equal(truncated.status, 400, truncated.text);
  t.equal((await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: image, type: 'image/png' } }) })).status, 200);
  const preview = await fetch(`${server.url}${base}/fields/avatar?preview=medium`, {
    headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret },
  });
  t.equal(preview.status, 200);
  t.match(sharp.cache(), { items: { current: 0 }, memory: { current: 0 } });
});

t.test('image fields take raster images: an SVG is refused at once, however long it would take to draw', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f8/data`;
  let svg = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="500" height="500"><defs><rect id="a0" width="1" height="1"/>';
  for (let i = 1; i <= 12; i++) svg += `<g id="a${i}">${`<use xlink:href="#a${i - 1}"/>`.repeat(10)}</g>`;
  svg += '</defs><use xlink:href="#a12"/></svg>';
  for (const type of ['image/svg+xml', 'image/png']) {
    const res = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: Buffer.from(svg), type } }) });
    t.equal(res.status, 400, type);
    t.same(res.body.field_errors, { avatar: ['must be a raster image (SVG is not taken)'] });
  }
  const file = await server.request('PUT', base, { app: server.app, rawBody: form({ contract: { bytes: Buffer.from(svg), type: 'image/svg+xml' } }) });
  t.equal(file.status, 200, 'a file field takes it as a file');
  await server.deps.apps.update(server.app.id, { schema: { ...schema, fields: { ...schema.fields, contract: { type: 'image' } } } });
  const preview = await server.request('GET', `${base}/fields/contract?preview=small`, { app: server.app });
  t.equal(preview.status, 400, 'and no preview is drawn of it');
});

t.test('an image over the pixel limit is refused from its header, before it is decoded, and no preview is drawn of one', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f9/data`;
  // 10 000 × 5 001 pixels, one over 50 MP; a flat colour compresses to a few kB.
  const large = await sharp({ create: { width: 10_000, height: 5_001, channels: 3, background: '#08f' } }).png({ compressionLevel: 1 }).toBuffer();
  const res = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: large, type: 'image/png' } }) });
  t.equal(res.status, 400, res.text);
  t.same(res.body.field_errors, { avatar: ['must be at most 50 megapixels'] });
  const kept = await server.request('GET', base, { app: server.app });
  t.equal(kept.status, 404, 'nothing was stored');

  const file = await server.request('PUT', base, { app: server.app, rawBody: form({ contract: { bytes: large, type: 'image/png' } }) });
  t.equal(file.status, 200, 'a file field takes it as a file');
  await server.deps.apps.update(server.app.id, { schema: { ...schema, fields: { ...schema.fields, contract: { type: 'image' } } } });
  const preview = await server.request('GET', `${base}/fields/contract?preview=small`, { app: server.app });
  t.equal(preview.status, 400, preview.text);
  t.same(preview.body.field_errors, { preview: ['the stored file must be at most 50 megapixels'] });

  // Past sharp's own limit (about 268 MP), which its header read enforces: still too large, not unreadable.
  const huge = pngHeaderOnly(20_000, 20_000);
  const refused = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: huge, type: 'image/png' } }) });
  t.equal(refused.status, 400, refused.text);
  t.same(refused.body.field_errors, { avatar: ['must be at most 50 megapixels'] }, '400 MP');
});

t.test("a body's images hold at most 100 megapixels together: the one past it is refused from the headers, and nothing is decoded", async (t) => {
  const photos = { type: 'image' as const };
  const server = await startServerWithSchema(t, { fields: { a: photos, b: photos, c: photos, d: photos }, allow_unknown_fields: false });
  const base = `/applications/${server.app.id}/users/budget/data`;
  // 8000 × 5000: 40 MP each. Decoded, these would be refused as no readable image.
  const header = { bytes: pngHeaderOnly(8000, 5000), type: 'image/png' };
  const before = storeDigest(server.deps.store);
  const over = await server.request('PUT', base, { app: server.app, rawBody: form({ a: header, b: header, c: header, d: header }) });
  t.equal(over.status, 400, over.text);
  t.equal(over.body.code, 'E_USER_UPDATE_FAILED');
  t.same(over.body.field_errors, { c: ["takes the body's images past 100 megapixels in all"] }, 'the part that crosses it, and no decoding problem');
  t.equal(storeDigest(server.deps.store), before, 'nothing stored');

  // Two of the largest, 50 MP each: the budget exactly.
  const largest = { bytes: blackPng(10_000, 5000), type: 'image/png' };
  const within = await server.request('PUT', base, { app: server.app, rawBody: form({ a: largest, d: largest }) });
  t.equal(within.status, 200, within.text);
  t.match(within.body.data, { a: { content_type: 'image/png' }, d: { content_type: 'image/png' } });
});

t.test('a JPEG of more than 64 scans is refused before it is decoded, and no preview is drawn of one stored before', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const appId = server.app.id;
  const base = `/applications/${appId}/users/scans/data`;
  const before = storeDigest(server.deps.store);
  const refused = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: manyScanJpeg(65), type: 'image/jpeg' } }) });
  t.equal(refused.status, 400, refused.text);
  t.equal(refused.body.code, 'E_USER_UPDATE_FAILED');
  t.same(refused.body.field_errors, { avatar: ['must be a JPEG of at most 64 scans'] });
  t.equal(storeDigest(server.deps.store), before, 'nothing stored');

  const limit = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: manyScanJpeg(64), type: 'image/jpeg' } }) });
  t.equal(limit.status, 200, limit.text);
  const photo = sharp({ create: { width: 300, height: 200, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } } });
  const progressive = await photo.jpeg({ progressive: true }).toBuffer();
  const ordinary = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: progressive, type: 'image/jpeg' } }) });
  t.equal(ordinary.status, 200, ordinary.text);
  t.same(ordinary.body.data.avatar, { content_type: 'image/jpeg', size: progressive.length, sha256: sha256(progressive) });

  // As if stored before uploads were checked for it (under the descriptor the profile holds): its preview
  // is refused as that of a file too large is, not drawn.
  const files = server.deps.store.db('user_files');
  const key = [appId, 'scans', 'avatar'];
  await server.deps.store.commit(() => files.put(key, { ...files.get(key), bytes: manyScanJpeg(1000) }));
  const preview = await server.request('GET', `${base}/fields/avatar?preview=small`, { app: server.app });
  t.equal(preview.status, 400, preview.text);
  t.same(preview.body.field_errors, { preview: ['the stored file must be a JPEG of at most 64 scans'] });
});

t.test('Start Of Scan bytes inside binary metadata are no scans: a JPEG of one scan with EXIF full of them is taken', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/exif/data`;
  const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#36c' } }).jpeg().toBuffer();
  const exif = segment(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), startOfScanBytes(30_000)]));
  const jpeg = withSegments(photo, exif);
  const res = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: jpeg, type: 'image/jpeg' } }) });
  t.equal(res.status, 200, res.text);
  t.same(res.body.data.avatar, { content_type: 'image/jpeg', size: jpeg.length, sha256: sha256(jpeg) });
  const preview = await server.request('GET', `${base}/fields/avatar?preview=small`, { app: server.app });
  t.equal(preview.status, 200, 'its preview is drawn');
});

t.test("at most two images decode at once, whatever the requests: libuv's threadpool stays free for commits", async (t) => {
  const server = await startServerWithSchema(t, schema);
  const image = { bytes: blackPng(10_000, 5000), type: 'image/png' };
  let most = 0;
  // sharp's tasks waiting for a thread of the pool or running on one. `counters()` reads its two counts one
  // after the other, so a task that starts on a thread between them is counted twice: the lower of two
  // readings in a row is the count (a third task at once would hold for a decode's milliseconds, not a read).
  const tasks = () => {
    const { queue, process } = sharp.counters();
    return queue + process;
  };
  const sample = setInterval(() => {
    most = Math.max(most, Math.min(tasks(), tasks()));
  }, 1);
  const writes = ['g1', 'g2', 'g3', 'g4'].map((user) =>
    server.request('PUT', `/applications/${server.app.id}/users/${user}/data`, { app: server.app, rawBody: form({ avatar: image }) }),
  );
  const answers = await Promise.all(writes);
  clearInterval(sample);
  t.same(
    answers.map((res) => res.status),
    [200, 200, 200, 200],
  );
  t.ok(most <= 2, `at most 2 at once (${most})`);
});

t.test('past 2 image tasks running and 8 waiting, an upload or a preview is 503 and changes nothing; after the burst both work again', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = (user: string) => `/applications/${server.app.id}/users/${user}/data`;
  const upload = (user: string) => server.request('PUT', base(user), { app: server.app, rawBody: form({ avatar: image }) });
  const preview = () => server.request('GET', `${base('burst')}/fields/avatar?preview=small`, { app: server.app });
  const image = { bytes: await png(10, 10, '#0c0'), type: 'image/png' };
  t.equal((await upload('burst')).status, 200);
  const gate = server.deps.imageDecodes;
  // Both places held until the test lets go, rather than by images slow enough (timing).
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  const holders = [gate.run(() => held), gate.run(() => held)];
  // An upload's first image task is its header read: it waits from the moment it reaches the gate.
  const run = gate.run.bind(gate);
  let reached = 0;
  let allWaiting!: () => void;
  const eightWaiting = new Promise<void>((resolve) => (allWaiting = resolve));
  gate.run = (task) => {
    if (++reached === 8) allWaiting();
    return run(task);
  };
  const waiting = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7', 'w8'].map(upload);
  await eightWaiting;

  const before = storeDigest(server.deps.store);
  const refused = await upload('past');
  t.equal(refused.status, 503, refused.text);
  t.match(refused.body, { statusCode: 503, code: 'E_UNAVAILABLE', message: 'Too many images are waiting to be decoded; try again' });
  t.equal(refused.headers.get('retry-after'), '1', 'the same request may be sent again');
  const refusedPreview = await preview();
  t.equal(refusedPreview.status, 503, refusedPreview.text);
  t.equal(refusedPreview.body.code, 'E_UNAVAILABLE');
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
  const text = await server.request('PATCH', base('burst'), { app: server.app, body: { data: { nickname: 'no image' } } });
  t.equal(text.status, 200, 'a write without images does not wait for them');

  letGo();
  await Promise.all(holders);
  t.same(
    (await Promise.all(waiting)).map((res) => res.status),
    Array(8).fill(200),
    'the uploads that waited are taken',
  );
  const again = await upload('past');
  t.equal(again.status, 200, again.text);
  t.match(again.body.data.avatar, { sha256: sha256(image.bytes) });
  const drawn = await preview();
  t.equal(drawn.status, 200, 'the refused preview was not remembered as undrawable');
  t.equal(drawn.headers.get('content-type'), 'image/webp');
});

t.test('verify reports a file a profile describes that is not stored', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const appId = server.app.id;
  const image = await png(10, 10, '#0c0');
  await server.request('PUT', `/applications/${appId}/users/f9/data`, { app: server.app, rawBody: form({ avatar: { bytes: image, type: 'image/png' } }) });
  t.same(verifyStore(server.deps, allInvariants).problems, []);
  const files = server.deps.store.db('user_files');
  await server.deps.store.commit(() => files.remove([appId, 'f9', 'avatar']));
  t.match(verifyStore(server.deps, allInvariants).problems, [/profile files: file avatar of f9 .* described in its profile but not stored/]);
});

t.test('a JSON value shaped like a file descriptor, in an object field or one outside the schema, is no file', async (t) => {
  const server = await startServerWithSchema(t, {
    fields: { ...schema.fields, prefs: { type: 'object' as const, user_readable: true, user_writable: true } },
    allow_unknown_fields: true,
  });
  const appId = server.app.id;
  const { userId, token } = await tokenFor(server, { email: 'shape@example.com' });
  const lookalike = { content_type: 'image/png', size: 1, sha256: '0'.repeat(64) };
  const mine = await server.request('PATCH', `/me/applications/${appId}/data`, { token, body: { data: { prefs: lookalike } } });
  t.equal(mine.status, 200, mine.text);
  const base = `/applications/${appId}/users/${userId}/data`;
  t.equal((await server.request('PATCH', base, { app: server.app, body: { data: { extra: lookalike } } })).status, 200);
  t.same((await server.request('GET', `${base}/fields/prefs`, { app: server.app })).body, { value: lookalike });
  t.same(verifyStore(server.deps, allInvariants).problems, [], 'verify finds no file missing: none was uploaded');
});

t.test('an upload is stored even when a value kept from before the field held files describes it already', async (t) => {
  const server = await startServerWithSchema(t, { ...schema, allow_unknown_fields: true });
  const appId = server.app.id;
  const base = `/applications/${appId}/users/f10/data`;
  const image = await png(10, 10, '#0c0');
  const descriptor = { content_type: 'image/png', size: image.length, sha256: sha256(image) };
  t.equal((await server.request('PUT', base, { app: server.app, body: { data: { badge: descriptor } } })).status, 200);
  await server.deps.apps.update(appId, { schema: { ...schema, fields: { ...schema.fields, badge: { type: 'image' } } } });
  const upload = await server.request('PATCH', base, { app: server.app, rawBody: form({ badge: { bytes: image, type: 'image/png' } }) });
  t.equal(upload.status, 200, upload.text);
  const file = await fetch(`${server.url}${base}/fields/badge`, {
    headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret },
  });
  t.equal(file.status, 200, 'the bytes acknowledged are served');
  t.ok(Buffer.from(await file.arrayBuffer()).equals(image));
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('a multipart part named __proto__ is refused like any unknown part, not dropped unread', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f11/data`;
  // Raw: an object literal cannot hold a key __proto__ for FormData to take.
  for (const headers of ['', 'Content-Type: application/pdf\r\n']) {
    const res = await server.request('PUT', base, {
      app: server.app,
      rawBody: `--b\r\nContent-Disposition: form-data; name="__proto__"\r\n${headers}\r\nx\r\n--b--\r\n`,
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
    });
    t.equal(res.status, 400, res.text);
    t.same(Object.keys(res.body.field_errors ?? {}), ['__proto__']);
  }
  t.equal((await server.request('GET', base, { app: server.app })).status, 404, 'no user was made');
});

t.test('a field PUT refuses a multipart part besides value, as its JSON body refuses a key besides value', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f12/data`;
  await server.request('PUT', base, { app: server.app, body: { data: { nickname: 'before' } } });
  const image = await png(10, 10, '#0c0');
  for (const [field, value] of [['nickname', 'after'], ['avatar', { bytes: image, type: 'image/png' }]] as const) {
    const res = await server.request('PUT', `${base}/fields/${field}`, { app: server.app, rawBody: form({ value, valeu: 'typo' }) });
    t.equal(res.status, 400, res.text);
    t.same(Object.keys(res.body.field_errors), ['valeu'], field);
  }
  t.same((await server.request('GET', base, { app: server.app })).body.data, { nickname: 'before', user_id: 'f12' }, 'nothing changed');
});

t.test('a write-only file field: a value beside its upload is refused whatever it is, so no answer tells the stored descriptor', async (t) => {
  const server = await startServerWithSchema(t, {
    fields: { ...schema.fields, id_scan: { type: 'image' as const, user_writable: true } },
    allow_unknown_fields: false,
  });
  const appId = server.app.id;
  const { userId, token } = await tokenFor(server, { user_id: 'scan-1' });
  const stored = await png(20, 20, '#0c0');
  const seeded = await server.request('PUT', `/applications/${appId}/users/${userId}/data`, {
    app: server.app,
    rawBody: form({ id_scan: { bytes: stored, type: 'image/png' } }),
  });
  t.equal(seeded.status, 200, seeded.text);
  const hidden = { content_type: 'image/png', size: stored.length, sha256: sha256(stored) };
  const replacement = await png(30, 30, '#00c');
  const me = `/me/applications/${appId}/data`;
  const guess = (value: unknown) =>
    server.request('PATCH', me, { token, rawBody: form({ data: JSON.stringify({ id_scan: value }), id_scan: { bytes: replacement, type: 'image/png' } }) });
  const right = await guess(hidden);
  const wrong = await guess({ ...hidden, size: hidden.size + 1 });
  t.equal(right.status, 400, 'the right guess is refused');
  t.same(right.body, wrong.body, 'as the wrong one is, in the same words');
  t.same(server.deps.users.require(appId, userId).context.data.id_scan, hidden, 'nothing changed');
  const upload = await server.request('PATCH', me, { token, rawBody: form({ id_scan: { bytes: replacement, type: 'image/png' } }) });
  t.equal(upload.status, 200, `an upload alone is the user's to make: ${upload.text}`);
});

t.test('a file field turned into an image field: an SVG or PNG uploaded to it before is served as an attachment, on GET and HEAD', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f20/data`;
  const headers = { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret };
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>');
  const image = await png(10, 10, '#c0c');
  const uploaded = await server.request('PUT', base, {
    app: server.app,
    rawBody: form({ contract: { bytes: svg, type: 'image/svg+xml' }, avatar: { bytes: image, type: 'image/png' } }),
  });
  t.equal(uploaded.status, 200, uploaded.text);
  const checked = await fetch(`${server.url}${base}/fields/avatar`, { headers });
  t.equal(checked.headers.get('content-disposition'), 'inline', 'an image checked at upload is shown inline');
  await server.deps.apps.update(server.app.id, { schema: { ...schema, fields: { ...schema.fields, contract: { type: 'image' } } } });
  for (const method of ['GET', 'HEAD']) {
    const file = await fetch(`${server.url}${base}/fields/contract`, { method, headers });
    t.equal(file.status, 200, method);
    t.equal(file.headers.get('content-type'), 'image/svg+xml', method);
    t.equal(file.headers.get('content-disposition'), 'attachment', `${method}: an SVG uploaded to a file field is never shown inline`);
    t.equal(file.headers.get('x-content-type-options'), 'nosniff', method);
    t.equal(file.headers.get('content-security-policy'), "default-src 'none'; sandbox", method);
  }

  // A raster image uploaded to the file field was never checked as one either.
  await server.deps.apps.update(server.app.id, { schema });
  t.equal((await server.request('PUT', base, { app: server.app, rawBody: form({ contract: { bytes: image, type: 'image/png' } }) })).status, 200);
  await server.deps.apps.update(server.app.id, { schema: { ...schema, fields: { ...schema.fields, contract: { type: 'image' } } } });
  const png2 = await fetch(`${server.url}${base}/fields/contract`, { headers });
  t.equal(png2.headers.get('content-disposition'), 'attachment');
});

t.test('requests for a preview not yet cached wait for the one being drawn rather than each decode the image again', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f21/data`;
  // 36 MP in a few kB: slow enough to decode that the requests below overlap the first one's drawing.
  const image = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#0a8' } }).png().toBuffer();
  const uploaded = await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: image, type: 'image/png' } }) });
  t.equal(uploaded.status, 200, uploaded.text);
  const store = server.deps.store;
  const commit = store.commit.bind(store);
  let commits = 0;
  store.commit = (write) => {
    commits++;
    return commit(write);
  };
  const answers = await Promise.all(
    Array.from({ length: 6 }, () =>
      fetch(`${server.url}${base}/fields/avatar?preview=medium`, { headers: { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret } }),
    ),
  );
  const bodies = await Promise.all(answers.map(async (answer) => Buffer.from(await answer.arrayBuffer())));
  t.same(answers.map((answer) => answer.status), [200, 200, 200, 200, 200, 200]);
  for (const body of bodies) t.ok(body.equals(bodies[0]), 'every request gets the one preview');
  t.equal(commits, 1, 'one preview drawn and cached for all of them');
  t.equal((await sharp(bodies[0]).metadata()).width, 256);
});

t.test('a stored file that fails to decode is decoded once: later preview requests, of any size, get the same answer without decoding', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const appId = server.app.id;
  const base = `/applications/${appId}/users/f22/data`;
  const image = await png(30, 20, '#a0a');
  const unreadable = Buffer.alloc(image.length, 'x');
  t.equal((await server.request('PUT', base, { app: server.app, rawBody: form({ contract: { bytes: unreadable, type: 'text/plain' } }) })).status, 200);
  await server.deps.apps.update(appId, { schema: { ...schema, fields: { ...schema.fields, contract: { type: 'image' } } } });
  const first = await server.request('GET', `${base}/fields/contract?preview=small`, { app: server.app });
  t.equal(first.status, 400, first.text);
  t.same(first.body.field_errors, { preview: ['the stored file is not a readable image'] });

  // Readable bytes of the same size under the same SHA-256: a request that decoded them again would draw a preview.
  const files = server.deps.store.db('user_files');
  await server.deps.store.commit(() => files.put([appId, 'f22', 'contract'], { ...files.get([appId, 'f22', 'contract']), bytes: image }));
  for (const size of ['small', 'large']) {
    const again = await server.request('GET', `${base}/fields/contract?preview=${size}`, { app: server.app });
    t.equal(again.status, 400, size);
    t.same(again.body, first.body, `${size}: the same answer, from memory`);
  }
});

t.test('an image checked at upload whose stored bytes no longer decode is a 500 logged with its cause, not a 400 remembered', async (t) => {
  const lines: string[] = [];
  const server = await startServerWithSchema(t, schema, { env: { SVC_LOG_LEVEL: 'info' }, logDestination: { write: (line: string) => void lines.push(line) } });
  const appId = server.app.id;
  const base = `/applications/${appId}/users/f23/data`;
  const image = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } } }).png().toBuffer();
  t.equal((await server.request('PUT', base, { app: server.app, rawBody: form({ avatar: { bytes: image, type: 'image/png' } }) })).status, 200);
  // Damaged where it is kept (a bad disk, a bad copy): no upload could have stored these bytes.
  const files = server.deps.store.db('user_files');
  const key = [appId, 'f23', 'avatar'];
  await server.deps.store.commit(() => files.put(key, { ...files.get(key), bytes: image.subarray(0, image.length >> 1) }));

  for (const size of ['small', 'large']) {
    const res = await server.request('GET', `${base}/fields/avatar?preview=${size}`, { app: server.app });
    t.equal(res.status, 500, `${size}: decoded again, not answered from memory`);
    t.equal(res.body.code, 'E_INTERNAL');
    const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.requestId === res.headers.get('x-request-id'));
    t.match(logged, [{ level: 50, msg: 'unhandled error', err: { message: /png/ } }], 'the decoder says what is wrong');
  }
});

t.test("a multipart write's data part is checked before its images are decoded: a body refused by it reports no problem of its images", async (t) => {
  const server = await startServerWithSchema(t, {
    fields: { ...schema.fields, tier: { type: 'string' as const, user_readable: true }, motto: { type: 'string' as const, required: true } },
    allow_unknown_fields: false,
  });
  const appId = server.app.id;
  const { token } = await tokenFor(server, { email: 'order@example.com' });
  // Decoded, these bytes would be refused as no readable image.
  const unreadable = { bytes: Buffer.from('not an image at all'), type: 'image/png' };
  const me = await server.request('PATCH', `/me/applications/${appId}/data`, {
    token,
    rawBody: form({ data: JSON.stringify({ tier: 'gold', nickname: 5 }), avatar: unreadable }),
  });
  t.equal(me.status, 400, me.text);
  t.same(me.body.field_errors, { tier: ['not writable by the user'], nickname: ['must be a string'] }, 'the rights and types of data, not the image');
  const created = await server.request('PUT', `/applications/${appId}/users/order-new/data`, {
    app: server.app,
    rawBody: form({ data: JSON.stringify({ nickname: 'n' }), avatar: unreadable }),
  });
  t.equal(created.status, 400, created.text);
  t.same(created.body.field_errors, { motto: ['is required'] }, 'a profile the write would create is checked whole first');
  const valid = await server.request('PATCH', `/me/applications/${appId}/data`, { token, rawBody: form({ data: JSON.stringify({ nickname: 'n' }), avatar: unreadable }) });
  t.same(valid.body.field_errors, { avatar: ['is not a readable image'] }, 'the image is decoded once the rest passes');
});

t.test('a /me upload to an image field the user may not write is refused before anything is decoded', async (t) => {
  const server = await startServerWithSchema(t, {
    fields: { ...schema.fields, badge: { type: 'image' as const, user_readable: true } },
    allow_unknown_fields: false,
  });
  const appId = server.app.id;
  const { userId, token } = await tokenFor(server, { email: 'rights@example.com' });
  const profile = async () => {
    const { data, attributes, meta } = (await server.request('GET', `/applications/${appId}/users/${userId}/data`, { app: server.app })).body;
    return { data, attributes, modified: meta.modified };
  };
  const before = await profile();
  // Decoded, these bytes would be refused as no readable image: the rights refusal shows they were not.
  const unreadable = { bytes: Buffer.from('not an image at all'), type: 'image/png' };
  const me = `/me/applications/${appId}/data`;
  for (const [method, path, body] of [
    ['PATCH', me, form({ badge: unreadable })],
    ['PUT', me, form({ badge: unreadable })],
    ['PUT', `${me}/fields/badge`, form({ value: unreadable })],
    // Nor is a part the user may write decoded in a request refused anyway.
    ['PATCH', me, form({ avatar: unreadable, badge: unreadable })],
  ] as const) {
    const res = await server.request(method, path, { token, rawBody: body });
    t.equal(res.status, 400, `${method} ${path}`);
    t.equal(res.body.code, 'E_USER_UPDATE_FAILED');
    t.same(res.body.field_errors, { badge: ['not writable by the user'] });
  }
  t.same(await profile(), before, 'nothing changed');

  const byApp = await server.request('PATCH', `/applications/${appId}/users/${userId}/data`, { app: server.app, rawBody: form({ badge: unreadable }) });
  t.same(byApp.body.field_errors, { badge: ['is not a readable image'] }, 'the application may write it: its upload is decoded');
});

t.test('a part without a filename or content type (text/plain) named after a file field is its file', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const base = `/applications/${server.app.id}/users/f24/data`;
  // As `curl -F contract=…` sends it: no filename, no content type (RFC 7578 §4.4: text/plain).
  const plain = (name: string, text: string) => ({
    rawBody: `--b\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${text}\r\n--b--\r\n`,
    headers: { 'content-type': 'multipart/form-data; boundary=b' },
  });
  const descriptor = (text: string) => ({ content_type: 'text/plain', size: Buffer.byteLength(text), sha256: sha256(Buffer.from(text)) });
  const written = await server.request('PUT', base, { app: server.app, ...plain('contract', 'signed: yes ✓') });
  t.equal(written.status, 200, written.text);
  t.same(written.body.data.contract, descriptor('signed: yes ✓'));
  const file = await server.request('GET', `${base}/fields/contract`, { app: server.app });
  t.equal(file.text, 'signed: yes ✓');
  t.equal(file.headers.get('content-type'), 'text/plain');
  t.equal(file.headers.get('content-disposition'), 'attachment');

  const field = await server.request('PUT', `${base}/fields/contract`, { app: server.app, ...plain('value', 'v2') });
  t.equal(field.status, 200, field.text);
  t.same(field.body.data.contract, descriptor('v2'), 'a field PUT takes it as its value part');

  const image = await server.request('PATCH', base, { app: server.app, ...plain('avatar', 'not a picture') });
  t.equal(image.status, 400);
  t.same(image.body.field_errors, { avatar: ['must be an image (content type image/*)'] }, 'an image field refuses it for what it is');
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

// An upsert to __uuid__ drew its user's ID on arrival, then decoded its image: an upsert arriving
// meanwhile drew a later ID and committed first, and a client that paged the user list to that one
// skipped the first for good. The run is held here as a long decode would hold it.
t.test("a user a generated-ID upsert makes after decoding its image is listed after the users committed before it", async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { runtime } = server.deps;
  const base = `/applications/${server.app.id}/users`;
  const ids = (res: { body: any }) => res.body.results.map((profile: { svc_user: string }) => profile.svc_user);
  const first = await server.request('PUT', `${base}/first/data`, { app: server.app, body: { data: {} } });
  t.equal(first.status, 200);

  const run = runtime.run.bind(runtime);
  let reached!: () => void;
  const atTurn = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  runtime.run = async (locks, body) => {
    runtime.run = run;
    reached();
    await released;
    return run(locks, body);
  };
  const withImage = server.request('PUT', `${base}/__uuid__/data`, {
    app: server.app,
    rawBody: form({ avatar: { bytes: await png(64, 64, '#0c0'), type: 'image/png' } }),
  });
  await atTurn;
  const meanwhile = await server.request('PUT', `${base}/__uuid__/data`, { app: server.app, body: { data: { nickname: 'meanwhile' } } });
  t.equal(meanwhile.status, 200);
  t.same(ids(await server.request('GET', `${base}/data?after=first`, { app: server.app })), [meanwhile.body.svc_user], "a client reads the list's end");

  release();
  const made = await withImage;
  t.equal(made.status, 200, made.text);
  const next = await server.request('GET', `${base}/data?after=${meanwhile.body.svc_user}`, { app: server.app });
  t.same(ids(next), [made.body.svc_user], 'the user with the image, committed later, is on the page after that end');
});
