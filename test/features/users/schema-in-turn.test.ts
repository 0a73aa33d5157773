import t from 'tap';
import { createHash } from 'node:crypto';
import { startServerWithSchema } from '../../helpers/schema.js';
import { holdLocks, queueOn } from '../../helpers/locks.js';
import { tokenFor } from '../../helpers/tokens.js';
import type { TestServer } from '../../helpers/server.js';
import { userLock } from '../../../src/features/users/directory.js';
import type { AppSchema } from '../../../src/features/applications/schemas.js';

/**
 * A profile write reads its body, then waits for its user's turn. Holding the user's lock, each test
 * queues a write, changes the app's schema while it waits, then lets it run: the write must be held
 * to the schema as it is in its turn, not as it was when the request came.
 */
const before: AppSchema = {
  fields: {
    nickname: { type: 'string', user_readable: true, user_writable: true },
    contract: { type: 'file', user_readable: true, user_writable: true },
  },
  allow_unknown_fields: true,
};

async function queuedBehindSchemaChange(server: TestServer, userId: string, after: AppSchema, send: () => Promise<Response>) {
  const lock = userLock(server.app.id, userId);
  const release = await holdLocks(server, [lock]);
  const queued = await queueOn(server, lock, send);
  await server.deps.apps.update(server.app.id, { schema: after });
  release();
  const answer = await queued.answer;
  return { status: answer.status, body: await answer.json() };
}

function fetcher(server: TestServer, auth: Record<string, string>) {
  return (method: string, path: string, body: object | FormData) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: body instanceof FormData ? auth : { ...auth, 'content-type': 'application/json' },
      body: body instanceof FormData ? body : JSON.stringify(body),
    });
}

t.test('a platform write that waited for its turn is refused a field the schema stopped allowing meanwhile', async (t) => {
  const server = await startServerWithSchema(t, before);
  const send = fetcher(server, { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret });
  const userId = 'platform-user';
  const path = `/applications/${server.app.id}/users/${userId}/data`;
  const closed: AppSchema = { ...before, allow_unknown_fields: false };
  const writes: Array<[string, string, object]> = [
    ['PUT', path, { data: { legacy: 'x' } }],
    ['PATCH', path, { data: { legacy: 'x' } }],
    ['PUT', `${path}/fields/legacy`, { value: 'x' }],
  ];
  for (const [method, route, body] of writes) {
    await server.deps.apps.update(server.app.id, { schema: before });
    await server.request('PUT', path, { app: server.app, body: { data: { nickname: 'kept' } } });
    const { status, body: answer } = await queuedBehindSchemaChange(server, userId, closed, () => send(method, route, body));
    t.equal(status, 400, `${method} ${route}`);
    t.equal(answer.code, 'E_USER_UPDATE_FAILED');
    t.ok(answer.field_errors?.legacy, 'names the field');
    t.same(server.deps.users.require(server.app.id, userId).context.data, { nickname: 'kept', user_id: userId }, 'nothing written');
  }
});

t.test('a /me write that waited for its turn is refused a field the schema took from users meanwhile', async (t) => {
  const server = await startServerWithSchema(t, before);
  const { userId, token } = await tokenFor(server, { user_id: 'me-user' });
  const send = fetcher(server, { authorization: `Bearer ${token}` });
  const path = `/me/applications/${server.app.id}/data`;
  // Stamped active now: the writes below take no turn for it before their own.
  await server.request('GET', path, { token });
  const readOnly: AppSchema = { ...before, fields: { ...before.fields, nickname: { type: 'string', user_readable: true } } };
  const writes: Array<[string, string, object]> = [
    ['PUT', path, { data: { nickname: 'mine' } }],
    ['PATCH', path, { data: { nickname: 'mine' } }],
    ['PUT', `${path}/fields/nickname`, { value: 'mine' }],
  ];
  for (const [method, route, body] of writes) {
    await server.deps.apps.update(server.app.id, { schema: before });
    const { status, body: answer } = await queuedBehindSchemaChange(server, userId, readOnly, () => send(method, route, body));
    t.equal(status, 400, `${method} ${route}`);
    t.same(answer.field_errors, { nickname: ['not writable by the user'] });
    t.equal(server.deps.users.require(server.app.id, userId).context.data.nickname, undefined, 'nothing written');
  }
});

t.test('a multipart write that waited for its turn has its parts read by the schema of its turn', async (t) => {
  const server = await startServerWithSchema(t, before);
  const send = fetcher(server, { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret });
  const userId = 'multipart-user';
  const path = `/applications/${server.app.id}/users/${userId}/data`;
  await server.request('PUT', path, { app: server.app, body: { data: { nickname: 'kept' } } });
  // Read as a `file` field's upload it passes; in an image field the same bytes are no image.
  const asImage: AppSchema = { ...before, fields: { ...before.fields, contract: { type: 'image', user_readable: true, user_writable: true } } };
  const upload = () => {
    const form = new FormData();
    form.set('contract', new Blob(['plain text'], { type: 'text/plain' }), 'contract.txt');
    return form;
  };
  for (const [method, route] of [['PATCH', path], ['PUT', `${path}/fields/contract`]]) {
    await server.deps.apps.update(server.app.id, { schema: before });
    const part = route === path ? upload() : (() => {
      const form = new FormData();
      form.set('value', upload().get('contract')!);
      return form;
    })();
    const { status, body } = await queuedBehindSchemaChange(server, userId, asImage, () => send(method, route, part));
    t.equal(status, 400, `${method} ${route}`);
    t.equal(body.code, 'E_USER_UPDATE_FAILED');
    t.same(body.field_errors, { contract: ['must be an image (content type image/*)'] });
    t.same(server.deps.users.require(server.app.id, userId).context.data, { nickname: 'kept', user_id: userId }, 'nothing written');
  }
});

t.test('a write that waited while the app was renamed is written, its multipart body read again', async (t) => {
  const server = await startServerWithSchema(t, before);
  const send = fetcher(server, { 'x-svc-app-key': server.app.key, 'x-svc-app-secret': server.app.secret });
  const path = `/applications/${server.app.id}/users/renamed/data`;
  const lock = userLock(server.app.id, 'renamed');
  const release = await holdLocks(server, [lock]);
  const form = new FormData();
  form.set('data', JSON.stringify({ legacy: 'x' }));
  form.set('contract', new Blob(['plain text'], { type: 'text/plain' }), 'contract.txt');
  const queued = await queueOn(server, lock, () => send('PATCH', path, form));
  await server.deps.apps.update(server.app.id, { name: 'renamed app' });
  release();
  const answer = await queued.answer;
  t.equal(answer.status, 200);
  t.same((await answer.json()).data, {
    legacy: 'x',
    contract: { content_type: 'text/plain', size: 10, sha256: createHash('sha256').update('plain text').digest('hex') },
    user_id: 'renamed',
  });
});
