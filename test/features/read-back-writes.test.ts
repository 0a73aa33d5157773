import t, { type Test } from 'tap';
import { startServer, type TestServer } from '../helpers/server.js';
import { startServerWithSchema } from '../helpers/schema.js';
import { signInByLink } from '../helpers/sign-in.js';
import { storeDigest } from '../helpers/store-digest.js';
import { manualClock } from '../../src/lib/clock.js';
import { as, person, platform } from './groups/helpers.js';

// A client that reads a resource, edits one field and writes the body back: the read-only fields the
// GET answered with are taken and ignored on PUT (as an OIDC client's are); any other key stays a 400.

/** PUTs `read` back to the platform's `path`: answered as read (updated_at kept), read again the same, nothing stored changed. */
async function sentBackUnchanged(t: Test, server: TestServer, api: ReturnType<typeof platform>, path: string, read: unknown) {
  const before = storeDigest(server.deps.store);
  const echoed = await api.put(path, read);
  t.equal(echoed.status, 200, echoed.text);
  t.same(echoed.body, read, 'sent back as read: answered as read, updated_at kept');
  t.same((await api.get(path)).body, read, 'read again as before');
  t.equal(storeDigest(server.deps.store), before, 'nothing stored changed');
  return echoed;
}

t.test('a group read and sent back as a PUT passes, on the platform and on /me', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');

  const made = await api.post('/groups', { name: 'Crew', admission_policy: 'open', meta: { colour: 'teal' } });
  const path = `/groups/${made.body.id}`;
  const read = (await api.get(path)).body;
  clock.advance(1000);
  const echoed = await sentBackUnchanged(t, server, api, path, read);

  const renamed = await api.put(path, { ...echoed.body, name: 'Team' });
  t.equal(renamed.status, 200, renamed.text);
  t.not(renamed.body.updated_at, read.updated_at, 'a change moves updated_at');
  t.same({ ...renamed.body, name: 'Crew', updated_at: echoed.body.updated_at }, echoed.body, 'the edited field alone changed');
  t.equal(renamed.body.name, 'Team');

  const unknown = await api.put(path, { ...renamed.body, colour: 'red' });
  t.equal(unknown.status, 400);
  t.same(unknown.body.field_errors, { colour: ['is not a known field'] });
  t.same((await api.get(path)).body, renamed.body, 'a refused PUT changed nothing');

  const mine = `/me/groups/${(await as(server, ada).post('/me/groups', { name: 'Mine', meta: { a: 1 } })).body.group.id}`;
  const wrapper = (await as(server, ada).get(mine)).body;
  clock.advance(1000);
  const untouched = storeDigest(server.deps.store);
  const same = await as(server, ada).put(mine, { ...wrapper.group, name: ' Mine ' });
  t.equal(same.status, 200, same.text);
  t.same(same.body, wrapper, '/me: the group of a read sent back (its name trimmed to the same) is answered as read');
  t.equal(storeDigest(server.deps.store), untouched, '/me: nothing stored changed');
  const sent = await as(server, ada).put(mine, { ...wrapper.group, admission_policy: 'open' });
  t.equal(sent.status, 200, sent.text);
  t.same(
    { ...sent.body, group: { ...sent.body.group, admission_policy: 'invite_only', updated_at: wrapper.group.updated_at } },
    wrapper,
    '/me: the group of a read sent back, one field edited, changes that field',
  );
  const whole = await as(server, ada).put(mine, wrapper);
  t.equal(whole.status, 400, 'the {group, member} wrapper is no group body: its group would be read as empty, resetting policy and meta');
  t.same(whole.body.field_errors, { group: ['is not a known field'] });
  t.same((await as(server, ada).get(mine)).body, sent.body);
});

t.test('an invite read and sent back as a PUT passes, on the platform and on /me', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const api = platform(server);
  const [ada, dan] = await Promise.all(['ada', 'dan'].map((name) => person(server, `${name}@example.com`)));

  const group = `/groups/${(await api.post('/groups', { name: 'Crew' })).body.id}`;
  const made = await api.post(`${group}/invites`, { email: 'cat@example.com', roles: ['member'], redirect_url: '/welcome', app_variant_id: 'web' });
  const path = `${group}/invites/${made.body.invitation.id}`;
  const memberPath = `${group}/members/${(await api.get(`${group}/members`)).body.results[0].id}`;
  const read = (await api.get(path)).body;
  const pending = (await api.get(memberPath)).body;
  clock.advance(1000);
  const echoed = await sentBackUnchanged(t, server, api, path, read);
  t.same((await api.get(memberPath)).body, pending, 'its pending member kept its updated_at');

  const edited = await api.put(path, { ...read, roles: ['member', 'editor'] });
  t.equal(edited.status, 200, edited.text);
  t.same(edited.body, { ...read, roles: ['member', 'editor', 'owner'] }, 'the edited roles alone changed (owner kept: the first member)');
  t.not((await api.get(memberPath)).body.updated_at, pending.updated_at, 'a change moves its pending member\'s updated_at');

  const unknown = await api.put(path, { ...edited.body, note: 'hi' });
  t.equal(unknown.status, 400);
  t.same(unknown.body.field_errors, { note: ['is not a known field'] });
  t.same((await api.get(path)).body, edited.body, 'a refused PUT changed nothing');

  const mine = `/me/groups/${(await as(server, ada).post('/me/groups', { name: 'Mine' })).body.group.id}`;
  const invited = await as(server, ada).post(`${mine}/invites`, { user_id: dan.userId, roles: ['member'] });
  const minePath = `${mine}/invites/${invited.body.invitation.id}`;
  const myRead = (await as(server, ada).get(minePath)).body;
  const unsent = storeDigest(server.deps.store);
  t.same((await as(server, ada).put(minePath, myRead)).body, myRead, '/me: one with no redirect_url or app variant sent back as read');
  t.equal(storeDigest(server.deps.store), unsent, '/me: nothing stored changed');
  const sent = await as(server, ada).put(minePath, { ...myRead, redirect_url: '/hello' });
  t.equal(sent.status, 200, sent.text);
  t.same(sent.body, { ...myRead, redirect_url: '/hello' }, '/me: the edited field alone changed');
});

t.test('an invite read after its user changed the address it was made for is still sent back', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = `/groups/${(await api.post('/groups', { name: 'Crew' })).body.id}`;
  const made = await api.post(`${group}/invites`, { email: 'cat@example.com', roles: ['member'] });
  const path = `${group}/invites/${made.body.invitation.id}`;
  const moved = await api.patch(`/users/${made.body.invitation.ensured_user_id}/data`, { data: { email: 'kit@example.com' } });
  t.equal(moved.status, 200, moved.text);

  const read = (await api.get(path)).body;
  t.equal(read.email, 'cat@example.com', 'the invite shows the address it was made for');
  const echoed = await api.put(path, read);
  t.equal(echoed.status, 200, echoed.text);
  t.same(echoed.body, read, 'sent back as read, nothing changed');
  const edited = await api.put(path, { ...read, email: ' CAT@example.com ', roles: ['member', 'editor'] });
  t.equal(edited.status, 200, `the address it was made for, written otherwise: ${edited.text}`);
  t.same(edited.body.roles, ['member', 'editor', 'owner']);
  t.equal((await api.put(path, { ...read, email: 'kit@example.com' })).status, 200, 'the address its user holds now names it too');

  const other = await api.put(path, { ...read, email: 'dan@example.com' });
  t.equal(other.status, 400, 'another address still names another user');
  t.same(other.body.field_errors, { email: ['an invite keeps its user; delete it and invite the other user instead'] });
});

t.test('a member read and sent back as a PUT passes, on the platform and on /me', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const api = platform(server);
  const [ada, bob] = await Promise.all(['ada', 'bob'].map((name) => person(server, `${name}@example.com`)));

  const mine = `/me/groups/${(await as(server, ada).post('/me/groups', { name: 'Mine' })).body.group.id}`;
  const added = await as(server, ada).post(`${mine}/members`, { user_id: bob.userId, roles: ['reader'] });
  const routes = [
    { label: 'platform', path: `/groups/${added.body.group_id}/members/${added.body.id}`, client: api },
    { label: '/me', path: `${mine}/members/${added.body.id}`, client: as(server, ada) },
  ];
  for (const { label, path, client } of routes) {
    const read = (await client.get(path)).body;
    t.ok(read.profile && read.added_by && read.state === 'active', `${label}: the read holds its read-only fields`);
    clock.advance(1000);
    const before = storeDigest(server.deps.store);
    const echoed = await client.put(path, read);
    t.equal(echoed.status, 200, `${label}: ${echoed.text}`);
    t.same(echoed.body, read, `${label}: sent back as read: answered as read, updated_at kept`);
    t.equal(storeDigest(server.deps.store), before, `${label}: nothing stored changed`);
    t.same((await client.get(path)).body, echoed.body);

    const edited = await client.put(path, { ...read, roles: ['reader', 'editor'], state: 'invite_rejected' });
    t.equal(edited.status, 200, `${label}: ${edited.text}`);
    t.same(edited.body.roles, ['reader', 'editor'], `${label}: the roles changed`);
    t.not(edited.body.updated_at, read.updated_at, `${label}: and updated_at moved`);
    t.same({ ...edited.body, roles: read.roles, updated_at: read.updated_at }, echoed.body, `${label}: nothing else (state is read-only: ignored)`);
    t.same((await client.get(path)).body, edited.body);

    const unknown = await client.put(path, { ...edited.body, role: 'admin' });
    t.equal(unknown.status, 400);
    t.same(unknown.body.field_errors, { role: ['is not a known field'] }, `${label}: another key is still unknown`);
    t.same((await client.get(path)).body, edited.body, `${label}: a refused PUT changed nothing`);
    await client.put(path, { roles: ['reader'] });
  }
});

const schema = {
  fields: {
    nickname: { type: 'string' as const, user_readable: true, user_writable: true },
    plan: { type: 'string' as const },
  },
};

/** A user signed in by a link (its email verified, sign-in meta set), with app data, attributes and a group. */
async function fullProfile(server: TestServer) {
  const signedIn = await signInByLink(server, 'ada@example.com');
  const path = `/applications/${server.app.id}/users/${signedIn.app_user_id}/data`;
  const data = { email: 'ada@example.com', first_name: 'Ada', nickname: 'ada', plan: 'pro' };
  const written = await server.request('PUT', path, { app: server.app, body: { data, attributes: { 'crm:tags': ['vip'] } } });
  if (written.status !== 200) throw new Error(`profile write answered ${written.status}: ${written.text}`);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  await api.post(`/groups/${group.id}/members`, { user_id: signedIn.app_user_id, roles: ['reader'] });
  return { path, token: signedIn.access_token };
}

t.test('a profile read and sent back as a PUT passes and changes nothing; one field edited changes that field', async (t) => {
  const server = await startServerWithSchema(t, schema);
  const { path, token } = await fullProfile(server);
  const routes = [
    { label: 'platform', path, auth: { app: server.app } },
    { label: '/me', path: `/me/applications/${server.app.id}/data`, auth: { token } },
  ];
  for (const { label, path, auth } of routes) {
    const read = (await server.request('GET', path, auth)).body;
    t.ok(read.groups.length === 1 && Object.keys(read.verified_data).length === 1 && read.meta.last_sign_in, `${label}: every part of a profile is filled`);
    const before = storeDigest(server.deps.store);
    const echoed = await server.request('PUT', path, { ...auth, body: read });
    t.equal(echoed.status, 200, `${label}: ${echoed.text}`);
    t.same(echoed.body, read, `${label}: answered as read`);
    t.equal(storeDigest(server.deps.store), before, `${label}: nothing stored changed, meta.modified neither`);

    const edited = await server.request('PUT', path, { ...auth, body: { ...read, data: { ...read.data, nickname: `${label} ada` } } });
    t.equal(edited.status, 200, `${label}: ${edited.text}`);
    t.equal(edited.body.data.nickname, `${label} ada`);
    t.same(
      { ...edited.body, data: read.data, meta: { ...edited.body.meta, modified: read.meta.modified } },
      read,
      `${label}: the edited field alone changed (and meta.modified)`,
    );

    const settled = storeDigest(server.deps.store);
    for (const body of [{ ...edited.body, extra: 1 }, { data: edited.body.data, Meta: {} }]) {
      const unknown = await server.request('PUT', path, { ...auth, body });
      t.equal(unknown.status, 400, `${label}: another key is still unknown`);
      t.equal(unknown.body.code, 'E_USER_UPDATE_FAILED');
      t.same(Object.keys(unknown.body.field_errors), [Object.keys(body).at(-1)]);
    }
    const patched = await server.request('PATCH', path, { ...auth, body: { data: { nickname: 'x' }, meta: edited.body.meta } });
    t.equal(patched.status, 400, `${label}: a PATCH names what changes: a read-only key there is refused`);
    t.same(patched.body.field_errors, { meta: ['unknown property: expected data and attributes'] });
    t.equal(storeDigest(server.deps.store), settled, `${label}: refused writes changed nothing`);
  }
  t.not((await server.request('GET', path, { app: server.app })).body.data.plan, undefined, 'the /me PUT kept the field its user cannot read');
});

t.test('the user ID key a profile is read with follows the brand', async (t) => {
  const server = await startServer(t, { env: { SVC_BRAND: 'acme' } });
  const path = `/applications/${server.app.id}/users/u1/data`;
  const read = (await server.request('PUT', path, { app: server.app, body: { data: { first_name: 'Ada' } } })).body;
  t.equal(read.acme_user, 'u1');
  t.equal((await server.request('PUT', path, { app: server.app, body: read })).status, 200);
  const other = await server.request('PUT', path, { app: server.app, body: { ...read, svc_user: 'u1' } });
  t.equal(other.status, 400, 'another brand\'s key is unknown');
  t.same(Object.keys(other.body.field_errors), ['svc_user']);
});

t.test('an OIDC client read and sent back as a PUT changes nothing; one field edited moves updated_at', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const path = `/applications/${server.app.id}/oidc-clients`;
  const made = await server.request('POST', path, { app: server.app, body: { name: 'Web', config: { hub_title: 'Hub', extra: { a: 1 } } } });
  const clientPath = `${path}/${made.body.id}`;
  const read = (await server.request('GET', clientPath, { app: server.app })).body;
  clock.advance(1000);
  const before = storeDigest(server.deps.store);
  const echoed = await server.request('PUT', clientPath, { app: server.app, body: read });
  t.equal(echoed.status, 200, echoed.text);
  t.same(echoed.body, read, 'answered as read (the config defaults it shows sent back are no change), updated_at kept');
  t.equal(storeDigest(server.deps.store), before, 'nothing stored changed');

  const edited = await server.request('PUT', clientPath, { app: server.app, body: { ...read, description: 'The web front' } });
  t.equal(edited.status, 200, edited.text);
  t.not(edited.body.updated_at, read.updated_at, 'a change moves updated_at');
  t.same({ ...edited.body, description: read.description, updated_at: read.updated_at }, read, 'the edited field alone changed');
});
