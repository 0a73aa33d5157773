import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { rawRequest } from '../../helpers/raw-http.js';
import { storeDigest } from '../../helpers/store-digest.js';
import { userLock } from '../../../src/features/users/directory.js';

// `.` and `..` as a user ID (docs/API.md, User profiles, IDs): clients and proxies resolve such a path
// segment away, so no new user takes one; one stored before is read and written as any other. Sent
// over raw HTTP: fetch resolves `..` and `%2E%2E` itself before anything is sent.

const server = await startServer(t);
const { id: appId, key, secret } = server.app;
const auth = `x-svc-app-key: ${key}\r\nx-svc-app-secret: ${secret}\r\n`;

function send(method: string, segment: string, body?: unknown) {
  const bytes = Buffer.from(body === undefined ? '' : JSON.stringify(body));
  const framing = body === undefined ? '' : `content-type: application/json\r\ncontent-length: ${bytes.length}\r\n`;
  return rawRequest(server.port, `${method} /applications/${appId}/users/${segment}/data HTTP/1.1\r\nHost: x\r\n${auth}${framing}\r\n`, bytes);
}
const json = (res: { body: Buffer }) => JSON.parse(res.body.toString());

/** `.` and `..` as sent, plain and percent-encoded in each letter case. */
const DOT_SEGMENTS = ['.', '..', '%2E', '%2e', '%2E%2E', '%2e%2e', '.%2E', '%2e.'];

t.test('an upsert refuses . and .. as a new user ID: 400 E_VALIDATION on user, nothing made', async (t) => {
  const before = storeDigest(server.deps.store);
  for (const segment of DOT_SEGMENTS) {
    for (const method of ['PUT', 'PATCH']) {
      const res = await send(method, segment, { data: { first_name: 'Dot' } });
      t.equal(res.status, 400, `${method} ${segment}`);
      t.match(json(res), { statusCode: 400, error: 'Bad Request', code: 'E_VALIDATION', message: String, messages: [String], field_errors: { user: [String] } });
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
  t.equal(server.deps.users.count(appId), 0);
});

t.test('a platform magic link refuses . and .. as a new user_id: 400 E_VALIDATION on user_id, nothing made', async (t) => {
  const before = storeDigest(server.deps.store);
  for (const userId of ['.', '..']) {
    const res = await server.request('POST', '/hub/auth/magic', {
      app: server.app,
      body: { verification_type: 'email', data: { email: 'dot@example.com' }, user_id: userId },
    });
    t.equal(res.status, 400, userId);
    t.match(res.body, { statusCode: 400, code: 'E_VALIDATION', messages: [String], field_errors: { user_id: [String] } });
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
});

t.test('IDs that only hold dots beside other characters are IDs like any other', async (t) => {
  for (const segment of ['...', '.a', 'a..b']) t.equal((await send('PUT', segment, { data: {} })).status, 200, segment);
});

t.test('a multipart upsert that would create . or .. is refused on user before its images are decoded', async (t) => {
  const { schema } = server.deps.apps.require(appId);
  await server.deps.apps.update(appId, { schema: { ...schema, fields: { ...schema.fields, avatar: { type: 'image' } } } });
  // A broken image: decoded, it would answer 400 on `avatar`.
  const body = Buffer.from('--b\r\nContent-Disposition: form-data; name="avatar"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nnot a png\r\n--b--\r\n');
  const framing = `content-type: multipart/form-data; boundary=b\r\ncontent-length: ${body.length}\r\n`;
  const before = storeDigest(server.deps.store);
  for (const segment of ['.', '..', '%2E%2E']) {
    for (const method of ['PUT', 'PATCH']) {
      const res = await rawRequest(server.port, `${method} /applications/${appId}/users/${segment}/data HTTP/1.1\r\nHost: x\r\n${auth}${framing}\r\n`, body);
      t.equal(res.status, 400, `${method} ${segment}`);
      t.match(json(res), { code: 'E_VALIDATION', field_errors: { user: [String] } }, `${method} ${segment}`);
      t.notOk(json(res).field_errors.avatar, `${method} ${segment}: the image is not decoded`);
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
});

t.test('a user stored under .. before the rule is still read, written and signed in', async (t) => {
  const { runtime, users } = server.deps;
  await runtime.run([userLock(appId, '..')], (turn) => {
    users.create(turn, { appId, id: '..', data: { first_name: 'Old' }, attributes: {} });
  });
  for (const segment of ['..', '%2E%2E']) {
    const read = await send('GET', segment);
    t.equal(read.status, 200, `GET ${segment}`);
    t.equal(json(read).svc_user, '..');
  }
  const written = await send('PATCH', '%2e.', { data: { first_name: 'New' } });
  t.equal(written.status, 200, 'an upsert of it updates it');
  t.equal(json(written).data.first_name, 'New');
  const link = await server.request('POST', '/hub/auth/magic', {
    app: server.app,
    body: { verification_type: 'email', data: { email: 'old@example.com' }, user_id: '..' },
  });
  t.equal(link.status, 200, 'a link names it by user_id');
  t.equal(link.body.app_user_id, '..');
});
