import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { tokenFor } from '../../helpers/tokens.js';
import { linkPath, profileOf, registerRedirects } from '../../helpers/sign-in.js';
import { storeDigest } from '../../helpers/store-digest.js';
import { as, assertProfilesConsistent, groupOf, person, platform, profileGroups } from './helpers.js';
import { manualClock } from '../../../src/lib/clock.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';

t.test('the invite story: an address with no user → pending member → accepted → active', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  t.same(server.deps.users.findByAddress(server.app.id, 'email', 'new@example.com'), [], 'no such user yet');

  const created = await as(server, ada).post(`/me/groups/${group.id}/invites`, {
    email: 'New@Example.com',
    roles: ['editor'],
    redirect_url: '/welcome',
    app_variant_id: 'web',
  });
  t.equal(created.status, 200);
  const { invitation } = created.body;
  t.match(invitation, {
    group_id: group.id,
    roles: ['editor'],
    state: 'pending',
    email: 'New@Example.com',
    user_lookup_value: 'New@Example.com',
    redirect_url: '/welcome',
    app_variant_id: 'web',
    created_by: ada.userId,
  });
  t.match(invitation.id, /^invite_/);
  const invitedId = invitation.ensured_user_id;
  t.same(server.deps.users.findByAddress(server.app.id, 'email', 'new@example.com'), [invitedId], 'the user was ensured');

  const members = await api.get(`/groups/${group.id}/members?lookup_filter=${invitedId}`);
  const pending = members.body.results[0];
  t.match(pending, { state: 'invite_pending', roles: ['editor'], invited_by: `user:${ada.userId}` });
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 1, 'a pending member is not counted');
  await assertProfilesConsistent(t, server, [ada.userId, invitedId]);

  const invited = await tokenFor(server, { user_id: invitedId });
  const accepted = await as(server, invited).post(`/me/groups/${group.id}/invites/${invitation.id}/accept`);
  t.equal(accepted.status, 200);
  t.match(accepted.body.member, { id: pending.id, state: 'active', roles: ['editor'] });
  t.equal(accepted.body.group.member_count, 2);
  const after = await api.get(`/groups/${group.id}/invites/${invitation.id}`);
  t.match(after.body, { state: 'accepted', accepted_by: invitedId });
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 2);
  await assertProfilesConsistent(t, server, [ada.userId, invitedId]);
  t.equal(profileGroups(server, ada.userId)[0].group.member_count, 2, "every member's profile sees the new count");

  const twice = await as(server, invited).post(`/me/groups/${group.id}/invites/${invitation.id}/accept`);
  t.equal(twice.status, 409);
  t.equal(twice.body.code, 'E_INVALID_STATE_TRANSITION');
  t.match(twice.body.message, /invite\.accept/);
  t.match(twice.body.message, /accepted/);
  const late = await as(server, invited).post(`/me/groups/${group.id}/invites/${invitation.id}/reject`);
  t.equal(late.body.code, 'E_INVALID_STATE_TRANSITION');
  const put = await api.put(`/groups/${group.id}/invites/${invitation.id}`, { user_id: invitedId, roles: ['x'] });
  t.equal(put.status, 409, 'an accepted invite is not updated');
  t.match(put.body.message, /invite\.update.*accepted/);
});

t.test('the reject story', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const { invitation } = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: ['reader'] })).body;
  t.equal(invitation.created_by, `app:${server.app.id}`);
  t.equal(invitation.user_lookup_value, undefined, 'a user_id invite has no lookup value');

  const rejected = await as(server, bob).post(`/me/groups/${group.id}/invites/${invitation.id}/reject`);
  t.equal(rejected.status, 200);
  t.equal(rejected.body.member.state, 'invite_rejected');
  t.equal(rejected.body.group.member_count, 1);
  t.equal((await api.get(`/groups/${group.id}/invites/${invitation.id}`)).body.state, 'rejected');
  const accept = await as(server, bob).post(`/me/groups/${group.id}/invites/${invitation.id}/accept`);
  t.equal(accept.status, 409);
  t.match(accept.body.message, /invite\.accept.*rejected/);
  const rejectedMember = rejected.body.member;
  const roles = await api.put(`/groups/${group.id}/members/${rejectedMember.id}`, { roles: ['x'] });
  t.equal(roles.status, 409, 'a rejected member is final');
  t.equal(roles.body.code, 'E_INVALID_STATE_TRANSITION');
  t.match(roles.body.message, /member\.setRoles.*invite_rejected/);
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId]);

  const again = await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [] });
  t.equal(again.status, 200, 'a rejected user may be invited again');
  const members = (await api.get(`/groups/${group.id}/members?lookup_filter=${bob.userId}`)).body;
  t.equal(members.total_results, 1, 'the new invite replaced the rejected member');
  t.equal(members.results[0].state, 'invite_pending');
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 1);
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId]);
});

t.test('invite rules: one pending invite per user, members are not invited, first invite gets owner', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Empty' })).body;
  const first = await api.post(`/groups/${group.id}/invites`, { phone: '+15550100', roles: ['reader'] });
  t.equal(first.status, 200);
  t.same(first.body.invitation.roles, ['reader', 'owner'], 'the first member invited gets owner');
  const userId = first.body.invitation.ensured_user_id;

  const dup = await api.post(`/groups/${group.id}/invites`, { phone: '+1 555 0100', roles: [] });
  t.equal(dup.status, 409);
  t.equal(dup.body.code, 'E_INVITE_EXISTS');
  const dupById = await api.post(`/groups/${group.id}/invites`, { user_id: userId, roles: [] });
  t.equal(dupById.body.code, 'E_INVITE_EXISTS');

  const update = { user_id: userId, roles: ['writer'], redirect_url: 'https://app.example/x' };
  const unregistered = await api.put(`/groups/${group.id}/invites/${first.body.invitation.id}`, update);
  t.equal(unregistered.status, 400, "an invite with a link takes only a place the app's OIDC clients registered, as on create");
  t.same(Object.keys(unregistered.body.field_errors), ['redirect_url']);
  await registerRedirects(server, { allowed_origins: ['https://app.example'] });
  const updated = await api.put(`/groups/${group.id}/invites/${first.body.invitation.id}`, update);
  t.equal(updated.status, 200);
  t.same(updated.body.roles, ['writer', 'owner'], 'the first invite keeps owner through updates');
  t.equal(updated.body.redirect_url, 'https://app.example/x');
  const member = (await api.get(`/groups/${group.id}/members?lookup_filter=${userId}`)).body.results[0];
  t.same(member.roles, ['writer', 'owner'], 'the update carried its roles to the pending member');
  const memberPut = await api.put(`/groups/${group.id}/members/${member.id}`, { roles: ['owner', 'chief'] });
  t.same(memberPut.body.roles, ['owner', 'chief']);
  const carried = await api.get(`/groups/${group.id}/invites/${first.body.invitation.id}`);
  t.same(carried.body.roles, ['owner', 'chief'], "a pending member's new roles go to its invite");
  t.equal(carried.body.redirect_url, 'https://app.example/x', 'and leave the rest of the invite as it was');
  const withoutOwner = await api.put(`/groups/${group.id}/members/${member.id}`, { roles: ['chief'] });
  t.same(withoutOwner.body.roles, ['chief', 'owner'], 'the first invite keeps owner when its member is changed too');
  t.same((await api.get(`/groups/${group.id}/invites/${first.body.invitation.id}`)).body.roles, ['chief', 'owner']);

  const other = await api.put(`/groups/${group.id}/invites/${first.body.invitation.id}`, { email: 'x@example.com', roles: [] });
  t.equal(other.status, 400, 'an invite keeps its user');
  t.ok(other.body.field_errors.email);
  const both = await api.post(`/groups/${group.id}/invites`, { user_id: userId, email: 'x@example.com', roles: [] });
  t.equal(both.status, 400);
  t.same(Object.keys(both.body.field_errors).sort(), ['email', 'user_id']);
  for (const body of [{ user_id: userId }, { user_id: userId, roles: [], redirect_url: 'javascript:alert(1)' }, { user_id: userId, roles: [], app_variant_id: '' }]) {
    t.equal((await api.post(`/groups/${group.id}/invites`, body)).status, 400, JSON.stringify(body));
  }

  const active = (await api.post(`/groups/${group.id}/members`, { email: 'act@example.com', roles: [] })).body;
  const memberInvite = await api.post(`/groups/${group.id}/invites`, { user_id: active.user_id, roles: [] });
  t.equal(memberInvite.status, 409);
  t.equal(memberInvite.body.code, 'E_MEMBER_EXISTS');
  t.equal((await api.post(`/groups/${group.id}/invites`, { user_id: 'user_missing', roles: [] })).body.code, 'E_USER_NOT_FOUND');
});

t.test('invite PUT may leave the user out (SPEC requires it on create only): the invite keeps its user', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const invites = `/me/groups/${group.id}/invites`;
  const made = await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: ['reader'] });
  const { id, ensured_user_id: userId } = made.body.invitation;

  const byApp = await api.put(`/groups/${group.id}/invites/${id}`, { roles: ['writer'] });
  t.equal(byApp.status, 200, 'the platform PUT names no user');
  t.match(byApp.body, { roles: ['writer'], ensured_user_id: userId });
  const byOwner = await as(server, ada).put(`${invites}/${id}`, { roles: ['editor'] });
  t.equal(byOwner.status, 200, 'the /me PUT names no user');
  t.match(byOwner.body, { roles: ['editor'], ensured_user_id: userId });
  const again = await as(server, ada).put(`${invites}/${id}`, { email: 'CY@example.com', roles: ['editor'] });
  t.equal(again.status, 200, 'naming the same user by an address still passes');

  const other = await api.put(`/groups/${group.id}/invites/${id}`, { user_id: ada.userId, roles: [] });
  t.equal(other.status, 400, 'naming another user is still refused');
  t.same(Object.keys(other.body.field_errors), ['user_id']);
  t.same((await api.get(`/groups/${group.id}/invites/${id}`)).body.roles, ['editor'], 'and changes nothing');

  const unnamed = await api.post(`/groups/${group.id}/invites`, { roles: [] });
  t.equal(unnamed.status, 400, 'create still needs a user');
  t.same(unnamed.body.field_errors, { user_id: ['one of user_id, email or phone is required'] });
  t.equal((await as(server, ada).post(invites, { roles: [] })).status, 400, 'on /me too');
});

t.test("an invite PUT is checked as its create: one with a link takes only a registered redirect_url, and its link goes there", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  await registerRedirects(server, { allowed_origins: ['https://app.example'] });
  const made = await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: [], redirect_url: 'https://app.example/in' });
  t.equal(made.status, 200);
  const { invitation, link } = made.body;
  const refusal = { redirect_url: ["must be one of the redirect_uris of the application's OIDC clients, or a URL on one of their allowed_origins"] };

  const before = storeDigest(server.deps.store);
  const body = { roles: ['x'], redirect_url: 'https://evil.example/in' };
  for (const [route, res] of [
    ['platform', await api.put(`/groups/${group.id}/invites/${invitation.id}`, body)],
    ['/me owner', await as(server, ada).put(`/me/groups/${group.id}/invites/${invitation.id}`, body)],
  ] as const) {
    t.equal(res.status, 400, route);
    t.equal(res.body.code, 'E_VALIDATION');
    t.same(res.body.field_errors, refusal);
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
  t.match((await api.get(`/groups/${group.id}/invites/${invitation.id}`)).body, { roles: [], redirect_url: 'https://app.example/in' });

  const moved = await as(server, ada).put(`/me/groups/${group.id}/invites/${invitation.id}`, { roles: [], redirect_url: 'https://app.example/elsewhere' });
  t.equal(moved.status, 200, 'a registered place passes');
  t.equal((await api.put(`/groups/${group.id}/invites/${invitation.id}`, { roles: [], redirect_url: '/welcome' })).status, 200, 'and so does a path');
  const redeemed = await server.request('GET', linkPath(link), { headers: { accept: 'text/html' } });
  t.equal(redeemed.status, 302);
  t.match(redeemed.headers.get('location'), /^http:\/\/svc\.test\/welcome#access_token=/, 'the link goes where the invite now says');

  const second = (await api.post(`/groups/${group.id}/invites`, { email: 'eve@example.com', roles: [], redirect_url: '/old' })).body;
  t.equal((await api.put(`/groups/${group.id}/invites/${second.invitation.id}`, { roles: [] })).body.redirect_url, undefined, 'a PUT without one clears it');
  const placeless = await server.request('GET', linkPath(second.link), { headers: { accept: 'text/html' } });
  t.equal(placeless.status, 200, 'and its link then has no place to send the browser to');
  t.equal(placeless.body.redirect_url, null);

  const onMe = await as(server, ada).post(`/me/groups/${group.id}/invites`, { email: 'dee@example.com', roles: [], redirect_url: 'https://any.example/' });
  t.equal(onMe.status, 200, 'an invite made on /me has no link, and no such check');
  const onMePut = await as(server, ada).put(`/me/groups/${group.id}/invites/${onMe.body.invitation.id}`, { roles: [], redirect_url: 'https://other.example/' });
  t.equal(onMePut.status, 200, 'on update either');
});

t.test('deleting a pending invite deletes its pending member; an answered one only itself', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const pending = (await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: [] })).body.invitation;
  t.equal((await api.del(`/groups/${group.id}/invites/${pending.id}`)).status, 204);
  t.equal((await api.get(`/groups/${group.id}/invites/${pending.id}`)).body.code, 'E_INVITE_NOT_FOUND');
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 1, 'the pending member went with it');
  t.same(profileGroups(server, pending.ensured_user_id), []);

  const bobs = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [] })).body.invitation;
  await as(server, bob).post(`/me/groups/${group.id}/invites/${bobs.id}/accept`);
  t.equal((await as(server, ada).del(`/me/groups/${group.id}/invites/${bobs.id}`)).status, 204);
  const members = (await api.get(`/groups/${group.id}/members`)).body;
  t.equal(members.total_results, 2, 'an accepted invite leaves its member');
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 2);

  const again = (await api.post(`/groups/${group.id}/invites`, { email: 'dee@example.com', roles: [] })).body.invitation;
  const member = (await api.get(`/groups/${group.id}/members?lookup_filter=dee@example.com`)).body.results[0];
  t.equal((await api.del(`/groups/${group.id}/members/${member.id}`)).status, 204);
  t.equal((await api.get(`/groups/${group.id}/invites/${again.id}`)).status, 404, "removing a pending member removes its pending invite");
  await assertProfilesConsistent(t, server, [ada.userId, bob.userId, again.ensured_user_id]);
});

t.test('on /me: owners manage invites, only the invited user answers, others see their own', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const cy = await person(server, 'cy@example.com');
  const { group } = await groupOf(server, ada);
  const base = `/me/groups/${group.id}/invites`;
  await platform(server).post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: [] });

  t.equal((await as(server, bob).post(base, { user_id: cy.userId, roles: [] })).status, 403, 'members are not owners');
  const made = await as(server, ada).post(base, { user_id: cy.userId, roles: [] });
  t.equal(made.status, 200);
  const invite = made.body.invitation;
  t.equal((await as(server, bob).put(`${base}/${invite.id}`, { user_id: cy.userId, roles: ['x'] })).status, 403);
  t.equal((await as(server, bob).del(`${base}/${invite.id}`)).status, 403);
  t.equal((await as(server, bob).post(`${base}/${invite.id}/accept`)).status, 404, 'only the invited user accepts; bob may not see the invite');
  t.equal((await as(server, ada).post(`${base}/${invite.id}/reject`)).status, 403, 'an owner does not answer for them');
  t.equal((await as(server, bob).get(`${base}/${invite.id}`)).status, 404);
  t.equal((await as(server, cy).get(`${base}/${invite.id}`)).body.id, invite.id, 'the invited user sees its invite');

  const byOwner = await as(server, ada).get(base);
  t.equal(byOwner.body.total_results, 1);
  const byBob = await as(server, bob).get(base);
  t.equal(byBob.body.total_results, 0, 'a member without owner sees only its own invites');
  const byCy = await as(server, cy).get(base);
  t.same(byCy.body.results.map((i: any) => i.id), [invite.id]);

  const updated = await as(server, ada).put(`${base}/${invite.id}`, { user_id: cy.userId, roles: ['writer'] });
  t.same(updated.body.roles, ['writer']);
  t.equal((await as(server, cy).post(`${base}/${invite.id}/accept`)).status, 200);
  t.same((await as(server, cy).get(`/me/groups/${group.id}`)).body.member.roles, ['writer']);
});

t.test("on /me a caller who may not see an invite gets the answer of a missing one: existence cannot be probed", async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const cy = await person(server, 'cy@example.com');
  const dee = await person(server, 'dee@example.com');
  const eve = await person(server, 'eve@example.com');
  const { group } = await groupOf(server, ada);
  const base = `/me/groups/${group.id}/invites`;
  await platform(server).post(`/groups/${group.id}/members`, { user_id: bob.userId, roles: ['editor'] });
  const invite = (await as(server, ada).post(base, { user_id: cy.userId, roles: [] })).body.invitation;
  await as(server, ada).post(base, { user_id: dee.userId, roles: [] });
  const missing = 'invite_01ARZ3NDEKTSV4RRFFQ69G5FAV'; // well-formed, of 2016: never issued here
  const shown = (res: { status: number; text: string }, id: string) => `${res.status} ${res.text.replaceAll(id, '<id>')}`;

  for (const caller of [bob, dee, eve]) await as(server, caller).get('/me/groups'); // each stamps its last_active first
  const before = storeDigest(server.deps.store);
  // bob: an active member without owner; dee: invited to the group too, but not by this invite; eve: no member at all.
  for (const [who, caller, code] of [['bob', bob, 'E_INVITE_NOT_FOUND'], ['dee', dee, 'E_INVITE_NOT_FOUND'], ['eve', eve, 'E_GROUP_NOT_FOUND']] as const) {
    const asked = {
      get: (id: string) => as(server, caller).get(`${base}/${id}`),
      accept: (id: string) => as(server, caller).post(`${base}/${id}/accept`),
      reject: (id: string) => as(server, caller).post(`${base}/${id}/reject`),
    };
    for (const [route, ask] of Object.entries(asked)) {
      const [existing, absent] = [await ask(invite.id), await ask(missing)];
      t.equal(existing.status, 404, `${who} ${route}`);
      t.equal(existing.body.code, code, `${who} ${route}`);
      t.equal(shown(existing, invite.id), shown(absent, missing), `${who} ${route}: an existing invite answers as a missing one`);
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
  t.equal((await as(server, ada).post(`${base}/${invite.id}/reject`)).status, 403, 'an owner, who lists every invite, is refused the answer');
  t.equal((await as(server, cy).get(`${base}/${invite.id}`)).body.id, invite.id, 'the invited user sees its invite');
});

t.test('invite lists page by ID and filter on ensured_user_id', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const invites: any[] = [];
  for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
    invites.push((await api.post(`/groups/${group.id}/invites`, { email, roles: [] })).body.invitation);
  }
  const bUser = invites[1].ensured_user_id;
  const b = await tokenFor(server, { user_id: bUser });
  await as(server, b).post(`/me/groups/${group.id}/invites/${invites[1].id}/reject`);
  invites.push((await api.post(`/groups/${group.id}/invites`, { user_id: bUser, roles: [] })).body.invitation);
  const ids = invites.map((i) => i.id);
  const base = `/groups/${group.id}/invites`;

  const first = await api.get(`${base}?page_size=3`);
  t.equal(first.body.total_results, 4);
  t.same(first.body.results.map((i: any) => i.id), ids.slice(0, 3));
  t.same((await api.get(`${base}?page_size=3&after=${ids[2]}`)).body.results.map((i: any) => i.id), ids.slice(3));

  const ofB = await api.get(`${base}?ensured_user_id=${bUser}`);
  t.equal(ofB.body.total_results, 2);
  t.same(ofB.body.results.map((i: any) => [i.id, i.state]), [[ids[1], 'rejected'], [ids[3], 'pending']]);
  t.same((await api.get(`${base}?ensured_user_id=${bUser}&page_size=1&after=${ids[1]}`)).body.results.map((i: any) => i.id), [ids[3]]);
  t.equal((await api.get(`${base}?page_size=0`)).status, 400);
  t.equal((await api.get(`${base}?lookup_filter=x`)).status, 400, 'invites take ensured_user_id, not lookup_filter');
});

t.test('concurrent invites of one address: one pending invite, one pending member', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => api.post(`/groups/${group.id}/invites`, { email: 'race@example.com', roles: [] })),
  );
  t.same(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409]);
  t.equal((await api.get(`/groups/${group.id}/invites`)).body.total_results, 1);
  t.equal((await api.get(`/groups/${group.id}/members`)).body.total_results, 1);
});

t.test('accepting an invite signs the user into its app variant: the variant joins <brand>:app_variants', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const variantsOf = (userId: string) => profileOf(server, userId).attributes['svc:app_variants'];

  await server.request('PATCH', `/applications/${server.app.id}/users/${bob.userId}/data`, { app: server.app, body: { attributes: { 'svc:app_variants': ['web'] } } });
  const forBob = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [], app_variant_id: 'ios' })).body.invitation;
  t.equal((await as(server, bob).post(`/me/groups/${group.id}/invites/${forBob.id}/accept`)).status, 200);
  t.same(variantsOf(bob.userId), ['web', 'ios'], 'accepted on /me');

  const byLink = (await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: [], app_variant_id: 'android' })).body;
  const redeemed = await server.request('GET', linkPath(byLink.link), { headers: { accept: 'application/json' } });
  t.equal(redeemed.status, 200, redeemed.text);
  t.same(variantsOf(byLink.invitation.ensured_user_id), ['android'], 'accepted through the link, by a user made for the invite');

  const other = await groupOf(server, ada, 'Other');
  const again = (await api.post(`/groups/${other.group.id}/invites`, { user_id: bob.userId, roles: [], app_variant_id: 'web' })).body.invitation;
  await as(server, bob).post(`/me/groups/${other.group.id}/invites/${again.id}/accept`);
  t.same(variantsOf(bob.userId), ['web', 'ios'], 'a variant the user has is not added twice');
  const dee = await person(server, 'dee@example.com');
  const rejected = (await api.post(`/groups/${group.id}/invites`, { user_id: dee.userId, roles: [], app_variant_id: 'tv' })).body.invitation;
  t.equal(variantsOf(dee.userId), undefined, 'nothing before an answer');
  t.equal((await as(server, dee).post(`/me/groups/${group.id}/invites/${rejected.id}/reject`)).status, 200);
  t.equal(variantsOf(dee.userId), undefined, 'nor after a rejection');
});

// The variant joined whatever the profile's size: a user filled to the 4 MiB of data and attributes
// passed it by accepting, and every later write of the app that did not shrink the profile was refused.
t.test('a variant that would take data and attributes past 4 MiB does not join; the invite is accepted all the same', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const limit = 4 * 1024 * 1024;
  const bytesOf = (profile: { data: unknown; attributes: unknown }) =>
    Buffer.byteLength(JSON.stringify(profile.data)) + Buffer.byteLength(JSON.stringify(profile.attributes));
  // Fields of at most 60 000 bytes (a value may hold 64 KiB), each adding `,"name":"value"` to data, up to the byte.
  const fill: Record<string, string> = {};
  for (let left = limit - bytesOf(profileOf(server, bob.userId)), i = 0; left > 0; i++) {
    const bytes = left > 100_000 ? 50_000 : left > 60_000 ? Math.ceil(left / 2) : left;
    fill[`f${i}`] = 'x'.repeat(bytes - `,"f${i}":""`.length);
    left -= bytes;
  }
  const names = Object.keys(fill);
  for (let i = 0; i < names.length; i += 15) {
    const res = await api.patch(`/users/${bob.userId}/data`, { data: Object.fromEntries(names.slice(i, i + 15).map((name) => [name, fill[name]])) });
    t.equal(res.status, 200);
  }
  t.equal(bytesOf(profileOf(server, bob.userId)), limit);

  const invite = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [], app_variant_id: 'web' })).body.invitation;
  const accepted = await as(server, bob).post(`/me/groups/${group.id}/invites/${invite.id}/accept`);
  t.equal(accepted.status, 200, accepted.text);
  t.equal(accepted.body.member.state, 'active');
  const after = profileOf(server, bob.userId);
  t.same(after.attributes, {}, 'the variant did not join');
  t.equal(bytesOf(after), limit, 'the profile stays within its limit');
});

// `<brand>:` attributes are the application's to write (ADDENDUM §3): an owner on /me naming the
// variant of an invite its second account then accepted granted that account any variant it liked.
t.test('only a variant the application named joins <brand>:app_variants: an owner on /me cannot grant one', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const [ada, bob, cy] = await Promise.all(['ada', 'bob', 'cy'].map((name) => person(server, `${name}@example.com`)));
  const { group } = await groupOf(server, ada);
  const owner = as(server, ada);
  const variantsOf = (userId: string) => profileOf(server, userId).attributes['svc:app_variants'];
  const invites = `/me/groups/${group.id}/invites`;

  const byOwner = (await owner.post(invites, { user_id: bob.userId, roles: [], app_variant_id: 'admin' })).body.invitation;
  t.equal(byOwner.app_variant_id, 'admin', 'an invite made on /me still shows the variant it names');
  t.equal((await as(server, bob).post(`${invites}/${byOwner.id}/accept`)).status, 200);
  t.equal(variantsOf(bob.userId), undefined, "accepting an owner's invite writes no variant");

  const byApp = (await api.post(`/groups/${group.id}/invites`, { user_id: cy.userId, roles: [], app_variant_id: 'web' })).body.invitation;
  const renamed = await owner.put(`${invites}/${byApp.id}`, { user_id: cy.userId, roles: ['reader'], app_variant_id: 'admin' });
  t.equal(renamed.status, 400, 'an owner cannot name another variant for an invite the application made');
  t.same(renamed.body.field_errors, { app_variant_id: ['only the application may name the app variant of an invite it made'] });
  const kept = await owner.put(`${invites}/${byApp.id}`, { user_id: cy.userId, roles: ['reader'] });
  t.equal(kept.status, 200);
  t.match(kept.body, { roles: ['reader'], app_variant_id: 'web' }, "an owner's PUT keeps the application's variant");
  const sentBack = await owner.put(`${invites}/${byApp.id}`, { user_id: cy.userId, roles: [], app_variant_id: 'web' });
  t.equal(sentBack.status, 200, 'sent back as read, it passes');
  t.equal((await as(server, cy).post(`${invites}/${byApp.id}/accept`)).status, 200);
  t.same(variantsOf(cy.userId), ['web'], "the application's variant joins on acceptance");
});

t.test('deleting a user with a pending invite leaves none of its links: the invite\'s, killed with its member, is forgotten too', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const invited = await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: ['reader'] });
  t.equal(invited.status, 200);
  const linksOf = (userId: string) => [...server.deps.store.db('magic_links').getRange({})].filter(({ value }) => value.userId === userId);
  t.ok(linksOf(bob.userId).length > 0, 'the invite made a link for bob');
  t.equal((await api.del(`/users/${bob.userId}/data`)).status, 204);
  t.same(linksOf(bob.userId), [], 'no record of a link of his is left, revoked or not');
  const dead = await server.request('GET', linkPath(invited.body.link), { headers: { accept: 'application/json' } });
  t.equal(dead.status, 404);
});

t.test("on /me an invite shows its email or phone only where the app lets users read that field, as member profiles do", async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  // email listed without rights: the app keeps it from its users; phone_number keeps its implicit ones.
  await server.deps.apps.update(server.app.id, { schema: { fields: { email: { type: 'string' } }, allow_unknown_fields: true } });
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const byEmail = (await api.post(`/groups/${group.id}/invites`, { email: 'bob@example.com', roles: [] })).body.invitation;
  const madeOnMe = await as(server, ada).post(`/me/groups/${group.id}/invites`, { phone: '+1 555 0100', roles: [] });
  t.equal(madeOnMe.status, 200);
  t.match(madeOnMe.body.invitation, { phone: '+1 555 0100', user_lookup_value: '+1 555 0100' }, 'a readable phone shows');
  const addressOf = ({ email, phone, user_lookup_value }: any) => ({ email, phone, user_lookup_value });
  const hidden = { email: undefined, phone: undefined, user_lookup_value: undefined };

  const listed = (await as(server, ada).get(`/me/groups/${group.id}/invites`)).body.results;
  t.same(listed.map((invite: any) => invite.id), [byEmail.id, madeOnMe.body.invitation.id]);
  t.same(addressOf(listed[0]), hidden, "an owner's list hides the email");
  t.same(addressOf((await as(server, ada).get(`/me/groups/${group.id}/invites/${byEmail.id}`)).body), hidden, 'and so does one invite');
  t.same(addressOf((await as(server, bob).get(`/me/groups/${group.id}/invites/${byEmail.id}`)).body), hidden, 'the invited user too');
  t.same(addressOf((await as(server, ada).put(`/me/groups/${group.id}/invites/${byEmail.id}`, { roles: ['x'] })).body), hidden, 'an update');
  const seen = (await api.get(`/groups/${group.id}/invites/${byEmail.id}`)).body;
  t.match(seen, { email: 'bob@example.com', user_lookup_value: 'bob@example.com' }, 'the platform sees it');
});

t.test('after the clock is stepped back (NTP), users made in the span it reads again are invited, and verify finds nothing', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  t.equal((await api.put('/users/cy/data', { data: { email: 'cy@example.com' } })).status, 200);
  const { group } = await groupOf(server, ada);
  clock.advance(-3600_000);
  const invites = [
    await as(server, ada).post(`/me/groups/${group.id}/invites`, { user_id: bob.userId, roles: [] }),
    await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: [] }),
  ];
  t.same(invites.map((res) => res.status), [200, 200]);
  const made = (userId: string) => Date.parse(server.deps.users.get(server.app.id, userId)!.context.meta.created);
  for (const { invitation } of invites.map((res) => res.body)) {
    t.ok(Date.parse(invitation.created_at) >= made(invitation.ensured_user_id), 'the invite is stamped no earlier than its user');
  }
  t.same(verifyStore(server.deps, allInvariants).problems, [], 'verify takes them for invites of their users');
  const bobs = await tokenFor(server, { user_id: bob.userId });
  t.equal((await as(server, bobs).post(`/me/groups/${group.id}/invites/${invites[0].body.invitation.id}/accept`)).status, 200);
  t.equal((await server.request('GET', linkPath(invites[1].body.link), { headers: { accept: 'application/json' } })).status, 200, "cy's link accepts hers");
  t.same(verifyStore(server.deps, allInvariants).problems, [], 'and once they are accepted');
});

t.test('an invite body needs roles and names its user one way only (SPEC: roles required, email/phone/user_id mutually exclusive), on create and PUT', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const { invitation } = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: ['reader'] })).body;
  const before = storeDigest(server.deps.store);
  const bodies: Array<[unknown, string[]]> = [
    [{ user_id: bob.userId }, ['roles']],
    [{ user_id: bob.userId, email: 'bob@example.com', roles: [] }, ['email', 'user_id']],
    [{ email: 'bob@example.com', phone: '+15550100', roles: [] }, ['email', 'phone']],
    [{ user_id: bob.userId, phone: '+15550100', roles: [] }, ['phone', 'user_id']],
  ];
  const routes: Array<[string, (body: unknown) => Promise<any>]> = [
    ['platform create', (body) => api.post(`/groups/${group.id}/invites`, body)],
    ['platform PUT', (body) => api.put(`/groups/${group.id}/invites/${invitation.id}`, body)],
    ['/me create', (body) => as(server, ada).post(`/me/groups/${group.id}/invites`, body)],
    ['/me PUT', (body) => as(server, ada).put(`/me/groups/${group.id}/invites/${invitation.id}`, body)],
  ];
  for (const [label, send] of routes) {
    for (const [body, fields] of bodies) {
      const res = await send(body);
      t.equal(res.status, 400, `${label} ${JSON.stringify(body)}`);
      t.equal(res.body.code, 'E_VALIDATION');
      t.same(Object.keys(res.body.field_errors).sort(), fields, `${label}: field_errors names ${fields.join(', ')}`);
    }
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing changed');
});
