import t from 'tap';
import { startServer, type TestServer } from '../../helpers/server.js';
import { linkPath, requestLink } from '../../helpers/sign-in.js';
import { GROUPS_PER_USER_LIMIT } from '../../../src/features/groups/keys.js';
import { as, person, platform, profileGroups } from './helpers.js';

/** `count` platform groups (`open` ones: a magic link may join them). */
async function makeGroups(server: TestServer, count: number): Promise<string[]> {
  const api = platform(server);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) => api.post('/groups', { name: `G${i + j}`, admission_policy: 'open' }));
    for (const res of await Promise.all(batch)) ids.push(res.body.id);
  }
  return ids;
}

t.test('a user holds at most 1000 member records: the 1001st is 400 on the field that named it, nothing made', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const groups = await makeGroups(server, GROUPS_PER_USER_LIMIT + 8);
  const [rejectedIn, ...rest] = groups.slice(0, GROUPS_PER_USER_LIMIT - 1);
  const [last, spare, joinable, viaInvite, ...racing] = groups.slice(GROUPS_PER_USER_LIMIT - 1);

  // A member record of any state counts: one of them rejected.
  t.equal((await api.post(`/groups/${rejectedIn}/members`, { user_id: ada.userId, roles: [], state: 'invite_rejected' })).status, 200);
  for (const id of rest) {
    const res = await api.post(`/groups/${id}/members`, { user_id: ada.userId, roles: [] });
    if (res.status !== 200) throw new Error(`member add answered ${res.status}: ${res.text}`);
  }
  t.equal((await api.post(`/groups/${last}/members`, { user_id: ada.userId, roles: [] })).status, 200, 'the 1000th is made');
  t.equal(profileGroups(server, ada.userId).length, GROUPS_PER_USER_LIMIT);
  const link = await requestLink(server, 'ada@example.com', { group_to_join: joinable });
  t.equal(link.status, 200, 'a link is made: it joins on redemption');

  const groupCount = (await api.get('/groups?page_size=1')).body.total_results;
  for (const [body, field] of [
    [{ user_id: ada.userId, roles: [] }, 'user_id'],
    [{ email: 'ada@example.com', roles: [] }, 'email'],
  ] as const) {
    const added = await api.post(`/groups/${spare}/members`, body);
    t.equal(added.status, 400, `member add by ${field}`);
    t.equal(added.body.code, 'E_VALIDATION');
    t.match(added.body.field_errors[field], [/1000 groups/]);
    const invited = await api.post(`/groups/${viaInvite}/invites`, { ...body });
    t.equal(invited.status, 400, `invite by ${field}`);
    t.match(invited.body.field_errors[field], [/1000 groups/]);
  }
  t.equal((await api.get(`/groups/${spare}/members`)).body.total_results, 0, 'no member made');
  t.equal((await api.get(`/groups/${viaInvite}/invites`)).body.total_results, 0, 'no invite made');

  const created = await as(server, ada).post('/me/groups', { name: 'Mine' });
  t.equal(created.status, 400, 'creating a group would make the 1001st');
  t.equal(created.body.code, 'E_VALIDATION');
  t.match(created.body.message, /1000 groups/);
  t.equal((await api.get('/groups?page_size=1')).body.total_results, groupCount, 'no group made');

  const redeemed = await server.request('GET', linkPath(link.body.link));
  t.equal(redeemed.status, 400, 'the link joins no 1001st group');
  t.match(redeemed.body.field_errors.group_to_join, [/1000 groups/]);
  t.equal(profileGroups(server, ada.userId).length, GROUPS_PER_USER_LIMIT, 'the profile is as it was');

  const again = await api.post(`/groups/${rejectedIn}/invites`, { user_id: ada.userId, roles: [] });
  t.equal(again.status, 200, 'an invite replacing the rejected member makes no new record');
  t.equal(profileGroups(server, ada.userId).length, GROUPS_PER_USER_LIMIT);

  // Deleting the pending invite deletes its pending member: a slot is free.
  t.equal((await api.del(`/groups/${rejectedIn}/invites/${again.body.invitation.id}`)).status, 204);
  const reused = await server.request('GET', linkPath(link.body.link));
  t.equal(reused.status, 200, 'the link stayed unspent and joins once a record is removed');
  t.ok(profileGroups(server, ada.userId).some(({ group }) => group.id === joinable));

  // At 999 again: of concurrent adds to different groups exactly one passes.
  t.equal((await api.del(`/groups/${joinable}`)).status, 204, 'a deleted group frees its records too');
  const burst = await Promise.all(racing.map((id) => api.post(`/groups/${id}/members`, { user_id: ada.userId, roles: [] })));
  t.same(burst.map((res) => res.status).sort(), [200, 400, 400, 400, 400], 'one of the burst is made');
  t.equal(profileGroups(server, ada.userId).length, GROUPS_PER_USER_LIMIT);
});
