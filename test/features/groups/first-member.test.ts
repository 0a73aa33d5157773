import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { person, platform, as } from './helpers.js';

t.test('an invite that replaces the group\'s only member record keeps owner: the group never loses its first owner', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const eve = await person(server, 'eve@example.com');
  const group = (await api.post('/groups', { name: 'Empty' })).body;
  const pending = await api.post(`/groups/${group.id}/members`, { user_id: eve.userId, roles: ['x'], state: 'invite_pending' });
  t.same(pending.body.roles, ['x', 'owner'], 'the first member record gets owner');
  const invited = await api.post(`/groups/${group.id}/invites`, { user_id: eve.userId, roles: ['z'] });
  t.equal(invited.status, 200, invited.text);
  t.same(invited.body.invitation.roles, ['z', 'owner'], 'its replacement is the first member again');
  const accepted = await as(server, eve).post(`/me/groups/${group.id}/invites/${invited.body.invitation.id}/accept`);
  t.equal(accepted.status, 200, accepted.text);
  t.same(accepted.body.member.roles, ['z', 'owner']);
});
