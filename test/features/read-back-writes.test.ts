import t from 'tap';
import { startServer } from '../helpers/server.js';
import { manualClock } from '../../src/lib/clock.js';
import { as, person, platform } from './groups/helpers.js';

// A client that reads a resource, edits one field and writes the body back: the read-only fields the
// GET answered with are taken and ignored on PUT (as an OIDC client's are); any other key stays a 400.

t.test('a group read and sent back as a PUT passes, on the platform and on /me', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');

  const made = await api.post('/groups', { name: 'Crew', admission_policy: 'open', meta: { colour: 'teal' } });
  const path = `/groups/${made.body.id}`;
  const read = (await api.get(path)).body;
  clock.advance(1000);
  const echoed = await api.put(path, read);
  t.equal(echoed.status, 200, echoed.text);
  t.not(echoed.body.updated_at, read.updated_at, 'a PUT moves updated_at, as it always did');
  t.same({ ...echoed.body, updated_at: read.updated_at }, read, 'and changes nothing else');
  t.same((await api.get(path)).body, echoed.body);

  const renamed = await api.put(path, { ...echoed.body, name: 'Team' });
  t.equal(renamed.status, 200, renamed.text);
  t.same({ ...renamed.body, name: 'Crew', updated_at: echoed.body.updated_at }, echoed.body, 'the edited field alone changed');
  t.equal(renamed.body.name, 'Team');

  const unknown = await api.put(path, { ...renamed.body, colour: 'red' });
  t.equal(unknown.status, 400);
  t.same(unknown.body.field_errors, { colour: ['is not a known field'] });
  t.same((await api.get(path)).body, renamed.body, 'a refused PUT changed nothing');

  const mine = `/me/groups/${(await as(server, ada).post('/me/groups', { name: 'Mine', meta: { a: 1 } })).body.group.id}`;
  const wrapper = (await as(server, ada).get(mine)).body;
  clock.advance(1000);
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
  const server = await startServer(t);
  const api = platform(server);
  const [ada, dan] = await Promise.all(['ada', 'dan'].map((name) => person(server, `${name}@example.com`)));

  const group = `/groups/${(await api.post('/groups', { name: 'Crew' })).body.id}`;
  const made = await api.post(`${group}/invites`, { email: 'cat@example.com', roles: ['member'], redirect_url: '/welcome', app_variant_id: 'web' });
  const path = `${group}/invites/${made.body.invitation.id}`;
  const read = (await api.get(path)).body;
  const echoed = await api.put(path, read);
  t.equal(echoed.status, 200, echoed.text);
  t.same(echoed.body, read, 'sent back as read, nothing changed');
  t.same((await api.get(path)).body, read);

  const edited = await api.put(path, { ...read, roles: ['member', 'editor'] });
  t.equal(edited.status, 200, edited.text);
  t.same(edited.body, { ...read, roles: ['member', 'editor', 'owner'] }, 'the edited roles alone changed (owner kept: the first member)');

  const unknown = await api.put(path, { ...edited.body, note: 'hi' });
  t.equal(unknown.status, 400);
  t.same(unknown.body.field_errors, { note: ['is not a known field'] });
  t.same((await api.get(path)).body, edited.body, 'a refused PUT changed nothing');

  const mine = `/me/groups/${(await as(server, ada).post('/me/groups', { name: 'Mine' })).body.group.id}`;
  const invited = await as(server, ada).post(`${mine}/invites`, { user_id: dan.userId, roles: ['member'] });
  const minePath = `${mine}/invites/${invited.body.invitation.id}`;
  const myRead = (await as(server, ada).get(minePath)).body;
  const sent = await as(server, ada).put(minePath, { ...myRead, redirect_url: '/hello' });
  t.equal(sent.status, 200, sent.text);
  t.same(sent.body, { ...myRead, redirect_url: '/hello' }, '/me: the edited field alone changed');
});
