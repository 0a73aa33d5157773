import t from 'tap';
import sharp from 'sharp';
import { deflateSync } from 'node:zlib';
import { join } from 'node:path';
import { startChildServer } from '../../helpers/child.js';
import { pngChunk } from '../../helpers/png.js';

t.test("damaged images write nothing on the server's stderr: libvips' warnings stay out of it, uploads and previews alike", async (t) => {
  const token = 'admin-token-0123456789abcdef';
  const server = await startChildServer(t, { dataDir: join(t.testdir(), 'data'), env: { SVC_ADMIN_TOKEN: token } });
  const app = server.defaultApp!;
  const credentials = { 'x-svc-app-key': app.key, 'x-svc-app-secret': app.secret };
  const schema = { fields: { avatar: { type: 'image' } }, allow_unknown_fields: true };
  const admin = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  t.equal((await fetch(`${server.url}/admin/applications/${app.id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ schema }) })).status, 200);

  const pixels = () => sharp({ create: { width: 300, height: 200, channels: 3, background: '#468' } });
  const png = await pixels().png().toBuffer();
  const jpeg = await pixels().jpeg().toBuffer();
  // After the IHDR chunk: an ICC profile that is none, which libpng warns of and the decode goes past.
  const badProfile = pngChunk('iCCP', Buffer.concat([Buffer.from('icc\0\0'), deflateSync(Buffer.from('no profile'.repeat(30)))]));
  const uploads = [
    { name: 'cut.png', bytes: png.subarray(0, png.length >> 1), type: 'image/png', status: 400 },
    { name: 'cut.jpg', bytes: jpeg.subarray(0, jpeg.length >> 1), type: 'image/jpeg', status: 400 },
    { name: 'profile.png', bytes: Buffer.concat([png.subarray(0, 33), badProfile, png.subarray(33)]), type: 'image/png', status: 200 },
  ];
  const profile = `${server.url}/applications/${app.id}/users/pictured/data`;
  for (const { name, bytes, type, status } of uploads) {
    const body = new FormData();
    body.set('avatar', new Blob([new Uint8Array(bytes)], { type }), name);
    t.equal((await fetch(profile, { method: 'PUT', headers: credentials, body })).status, status, name);
  }
  t.equal((await fetch(`${profile}/fields/avatar?preview=small`, { headers: credentials })).status, 200, 'the last one has a preview');

  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });
  t.equal(server.stderr(), '', 'nothing on stderr');
});
