import t from 'tap';
import { startServer } from '../../helpers/server.js';
import { linkPath, profileOf, requestLink } from '../../helpers/sign-in.js';
import { storeDigest } from '../../helpers/store-digest.js';
import { tokenKey } from '../../../src/lib/secrets.js';
import { verifyStore } from '../../../src/verify/invariants.js';
import { allInvariants } from '../../../src/verify/all.js';
import { GroupEdit } from '../../../src/features/groups/edit.js';
import { groupLock } from '../../../src/features/groups/keys.js';
import { lockedUpFront, type HoldingHandler } from '../../../src/features/groups/link-purposes.js';
import type { LinkFacts } from '../../../src/features/magic-links/purposes.js';
import { userLock } from '../../../src/features/users/directory.js';
import { manualClock } from '../../../src/lib/clock.js';
import { holdLocks, queueOn } from '../../helpers/locks.js';
import { as, assertProfilesConsistent, groupOf, person, platform, profileGroups } from './helpers.js';

const redeem = (server: Awaited<ReturnType<typeof startServer>>, link: string) =>
  server.request('GET', linkPath(link), { headers: { accept: 'application/json' } });

t.test('the invite story through the link: sign in and accept in one commit', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const made = await api.post(`/groups/${group.id}/invites`, { email: 'new@example.com', roles: ['editor'] });
  t.equal(made.status, 200);
  const { link, invitation } = made.body;
  t.match(link, new RegExp(`^${server.deps.config.publicUrl}/hub/auth/magic/[A-Za-z0-9_-]{43}$`), 'a single-use magic link');
  const invitedId = invitation.ensured_user_id;
  t.equal(profileOf(server, invitedId).meta.last_sign_in, undefined, 'the invited user has not signed in');

  const entries = server.deps.store.db<string>('invite_links');
  const ref = entries.get([server.app.id, group.id, invitation.id])!;
  const redeemed = await redeem(server, link);
  t.equal(redeemed.status, 200);
  t.equal(redeemed.body.app_user_id, invitedId, 'the link signs the invited user in');
  t.type(redeemed.body.access_token, 'string');
  const me = await server.request('GET', `/me/groups/${group.id}`, { token: redeemed.body.access_token });
  t.equal(me.status, 200, 'the tokens it answers work on /me');
  t.match(me.body.member, { state: 'active', roles: ['editor'] });
  t.equal(me.body.group.member_count, 2);
  t.match((await api.get(`/groups/${group.id}/invites/${invitation.id}`)).body, { state: 'accepted', accepted_by: invitedId });
  const profile = profileOf(server, invitedId);
  t.equal(profile.meta.last_sign_in_method, 'invite_link');
  t.same(profile.verified_data, { email: 'new@example.com' }, 'the address the link went to is verified');
  t.same(profileGroups(server, invitedId).map((p) => p.member.state), ['active']);
  await assertProfilesConsistent(t, server, [ada.userId, invitedId]);

  const again = await redeem(server, link);
  t.equal(again.status, 410, 'single use');
  t.same([...entries.getKeys({})], [], 'the answered invite no longer names its link, as one answered on /me does');
  t.equal(server.deps.store.db<{ state: string }>('magic_links').get(ref)?.state, 'used', 'a link spent, not revoked');
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('an answered or deleted invite kills its link; a refused redemption changes nothing', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);

  const deleted = (await api.post(`/groups/${group.id}/invites`, { email: 'cy@example.com', roles: [] })).body;
  t.equal((await api.del(`/groups/${group.id}/invites/${deleted.invitation.id}`)).status, 204);
  t.equal((await redeem(server, deleted.link)).status, 410, 'a deleted invite’s link is dead');

  const answered = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [] })).body;
  t.equal((await as(server, bob).post(`/me/groups/${group.id}/invites/${answered.invitation.id}/reject`)).status, 200);
  t.equal((await redeem(server, answered.link)).status, 410, 'a rejected invite’s link is dead');
  t.equal((await api.get(`/groups/${group.id}/invites/${answered.invitation.id}`)).body.state, 'rejected');

  const orphan = (await api.post(`/groups/${group.id}/invites`, { email: 'dee@example.com', roles: [] })).body;
  t.equal((await as(server, ada).del(`/me/groups/${group.id}`)).status, 204);
  t.equal((await redeem(server, orphan.link)).status, 410, 'a deleted group’s invite links are dead');
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('an invite link with a relative redirect_url sends the browser under the public URL', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const { link } = (await api.post(`/groups/${group.id}/invites`, { email: 'a@example.com', roles: [], redirect_url: '/groups/joined' })).body;
  const browser = await server.request('GET', linkPath(link));
  t.equal(browser.status, 302);
  t.match(browser.headers.get('location'), `${server.deps.config.publicUrl}/groups/joined#access_token=`);
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 1);
});

t.test('an invite link with a relative redirect_url answers JSON with the absolute URL its 302 goes to', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const links = [];
  for (const email of ['a@example.com', 'b@example.com']) {
    links.push((await api.post(`/groups/${group.id}/invites`, { email, roles: [], redirect_url: '/groups/joined?from=invite' })).body.link);
  }
  const browser = await server.request('GET', linkPath(links[0]));
  t.equal(browser.status, 302);
  const followed = browser.headers.get('location')!.split('#')[0];
  t.equal(followed, `${server.deps.config.publicUrl}/groups/joined?from=invite`);
  const json = await redeem(server, links[1]);
  t.equal(json.status, 200, json.text);
  t.equal(json.body.redirect_url, followed, 'the JSON answer names where the 302 goes, not the bare path');
});

t.test('with a path in SVC_PUBLIC_URL, links and relative locations stay under it', async (t) => {
  const base = 'https://id.example/identity';
  const server = await startServer(t, { env: { SVC_PUBLIC_URL: `${base}/` } });
  // A proxy passes `${base}/…` on as `/…`: the path the server answers.
  const servedPath = (link: string) => {
    t.ok(link.startsWith(`${base}/hub/auth/magic/`), `${link} keeps the public URL's path`);
    return link.slice(base.length);
  };
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const invite = (email: string, redirect_url: string) => api.post(`/groups/${group.id}/invites`, { email, roles: [], redirect_url });

  const toBrowser = (await invite('a@example.com', '/groups/joined?from=invite')).body.link;
  const browser = await server.request('GET', servedPath(toBrowser));
  t.equal(browser.status, 302);
  t.match(browser.headers.get('location'), `${base}/groups/joined?from=invite#access_token=`, 'a relative location is under the public URL, path and all');
  const toClient = (await invite('b@example.com', '/groups/joined?from=invite')).body.link;
  const json = await server.request('GET', servedPath(toClient), { headers: { accept: 'application/json' } });
  t.equal(json.body.redirect_url, `${base}/groups/joined?from=invite`, 'in JSON too');

  servedPath((await requestLink(server, 'c@example.com')).body.link);
  servedPath((await server.request('POST', '/me/auth/magic', { token: ada.token })).body.link);

  const before = storeDigest(server.deps.store);
  for (const url of ['/../app', '/groups/%2e%2E/app', '/./welcome', '/groups/.']) {
    const refused = await invite('d@example.com', url);
    t.equal(refused.status, 400, `${url}: a dot segment would climb out of the public URL's path`);
    t.same(Object.keys(refused.body.field_errors), ['redirect_url']);
  }
  t.equal(storeDigest(server.deps.store), before, 'nothing made');

  // A link stored before dot segments were refused is answered in JSON, never followed out of the public URL.
  const legacy = (await invite('e@example.com', '/groups/joined')).body.link;
  const links = server.deps.store.db<any>('magic_links');
  const ref = tokenKey(server.deps.pepper, legacy.split('/').pop());
  await server.deps.store.commit(() => links.put(ref, { ...links.get(ref), redirectUrl: '/../app' }));
  const unfollowed = await server.request('GET', servedPath(legacy), { headers: { accept: 'text/html' } });
  t.equal(unfollowed.status, 200);
  t.equal(unfollowed.headers.get('location'), null);
  t.equal(unfollowed.body.redirect_url, null);
});

t.test('group_to_join: a magic link that joins an open group on redemption', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const open = (await api.post('/groups', { name: 'Open', admission_policy: 'open' })).body;
  const closed = (await api.post('/groups', { name: 'Closed' })).body;

  const before = storeDigest(server.deps.store);
  for (const group_to_join of [closed.id, 'group_01JD0000000000000000000000']) {
    const refused = await requestLink(server, 'ada@example.com', { group_to_join });
    t.equal(refused.status, 400, group_to_join);
    t.ok(refused.body.field_errors.group_to_join);
  }
  t.equal(storeDigest(server.deps.store), before, 'a refused link stores nothing');

  const made = await requestLink(server, 'ada@example.com', { group_to_join: open.id });
  t.equal(made.status, 200);
  const redeemed = await redeem(server, made.body.link);
  t.equal(redeemed.status, 200);
  const userId = made.body.app_user_id;
  const member = (await api.get(`/groups/${open.id}/members?lookup_filter=${userId}`)).body.results[0];
  t.match(member, { state: 'active', roles: ['owner'], added_by: `user:${userId}` }, 'the first member of a group is its owner');
  t.equal((await api.get(`/groups/${open.id}`)).body.member_count, 1);

  const twice = await requestLink(server, 'ada@example.com', { group_to_join: open.id });
  t.equal((await redeem(server, twice.body.link)).status, 200, 'a member signs in again without a second membership');
  t.equal((await api.get(`/groups/${open.id}/members`)).body.total_results, 1);
  await assertProfilesConsistent(t, server, [userId]);
});

t.test('a group closed after its link was made: redemption refused, link unspent, user not signed in', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Open', admission_policy: 'open' })).body;
  const made = await requestLink(server, 'bob@example.com', { group_to_join: group.id });
  await api.put(`/groups/${group.id}`, { name: 'Open', admission_policy: 'invite_only' });
  const refused = await redeem(server, made.body.link);
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 'E_GROUP_NOT_OPEN');
  const profile = profileOf(server, made.body.app_user_id);
  t.equal(profile.meta.last_sign_in, undefined, 'no sign-in was committed');
  t.same(profile.verified_data, {});
  t.equal((await api.get(`/groups/${group.id}`)).body.member_count, 0);
  await api.put(`/groups/${group.id}`, { name: 'Open', admission_policy: 'open' });
  t.equal((await redeem(server, made.body.link)).status, 200, 'the link was still pending');
});

t.test('a group deleted after its link was made: the link answers 410, as an invite link does', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const group = (await api.post('/groups', { name: 'Open', admission_policy: 'open' })).body;
  const made = await requestLink(server, 'bob@example.com', { group_to_join: group.id });
  t.equal((await api.del(`/groups/${group.id}`)).status, 204);
  for (let attempt = 0; attempt < 2; attempt++) {
    const gone = await redeem(server, made.body.link);
    t.equal(gone.status, 410);
    t.equal(gone.body.code, 'E_LINK_EXPIRED');
  }
  t.equal(profileOf(server, made.body.app_user_id).meta.last_sign_in, undefined, 'no sign-in was committed');
});

t.test('purposes are registered once, at start', async (t) => {
  const server = await startServer(t);
  t.throws(() => server.deps.magicLinks.purposes.register('invite', { method: 'invite_link', check() {}, locks: () => [], redeem() {} }));
  t.throws(() => server.deps.magicLinks.purposes.register('join_group', { method: 'magic_link', check() {}, locks: () => [], redeem() {} }));
});

t.test('a group link handler whose locks miss one its redemption holds fails loudly, committing nothing', async (t) => {
  const server = await startServer(t);
  const { groups: core, runtime } = server.deps;
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  // Like join_group for a user who already has a member: the body writes nothing, so only the
  // group's lock, held for exclusion, makes its "already a member" answer true.
  const joining = (locks: HoldingHandler<'join_group'>['locks']) =>
    lockedUpFront<'join_group'>({
      method: 'magic_link',
      check() {},
      locks,
      redeem(turn, link, hold) {
        if (!new GroupEdit(core, turn, hold, link.appId, link.purpose.groupId).memberOfUser(link.userId)) throw new Error('not a member');
      },
    });
  const redemption = (handler: ReturnType<typeof joining>, link: LinkFacts<'join_group'>) =>
    runtime.run([userLock(link.appId, link.userId), ...handler.locks(link)], (turn) => handler.redeem(turn, link));
  const link = (): LinkFacts<'join_group'> => ({ appId: server.app.id, userId: ada.userId, purpose: { kind: 'join_group', groupId: group.id } });

  const before = storeDigest(server.deps.store);
  await t.rejects(redemption(joining(() => []), link()), { name: 'TypeError', message: /did not lock up front/ }, 'the group lock was never named');
  const named = joining((facts) => [groupLock(facts.appId, facts.purpose.groupId)]);
  await t.resolves(redemption(named, link()), 'named, it is held');
  await t.rejects(
    runtime.run([], (turn) => named.redeem(turn, link())),
    { name: 'TypeError', message: /without the locks/ },
    'a redemption that never asked for the locks',
  );
  t.equal(storeDigest(server.deps.store), before);
});

t.test('an invite made on /me comes without a link: its holder could sign in as the invited user', async (t) => {
  const server = await startServer(t);
  const ada = await person(server, 'ada@example.com');
  const bob = await person(server, 'bob@example.com');
  const { group } = await groupOf(server, ada);
  const made = await as(server, ada).post(`/me/groups/${group.id}/invites`, { user_id: bob.userId, roles: [] });
  t.equal(made.status, 200);
  t.equal(made.body.link, null);
  t.equal(made.body.invitation.state, 'pending');
  t.same([...server.deps.store.db('invite_links').getKeys({})], [], 'no link was made');
  const accepted = await as(server, bob).post(`/me/groups/${group.id}/invites/${made.body.invitation.id}/accept`);
  t.equal(accepted.status, 200, 'the invited user accepts on /me, signed in its own way');
  t.equal(accepted.body.member.state, 'active');
});

// An invite's link is killed by group turns, which do not hold the invited user's lock; the user's own
// turns may forget the link meanwhile (a new link prunes those expired a week ago). Both staged at once,
// the kill must not write back the link the user's turn forgot: a link record that no index names.
t.test('killing an invite link the user forgets at the same time leaves no link behind', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const api = platform(server);
  const appId = server.app.id;
  const group = (await api.post('/groups', { name: 'Crew' })).body;
  const bob = await person(server, 'bob@example.com');
  const invite = (await api.post(`/groups/${group.id}/invites`, { user_id: bob.userId, roles: [] })).body.invitation;
  clock.advance(15 * 24 * 3600 * 1000);

  const release = await holdLocks(server, [userLock(appId, bob.userId), groupLock(appId, group.id)]);
  const linked = await queueOn(server, userLock(appId, bob.userId), () =>
    server.request('POST', '/hub/auth/magic', { app: server.app, body: { verification_type: 'email', user_id: bob.userId, data: { email: 'bob@example.com' } } }),
  );
  const deleted = await queueOn(server, groupLock(appId, group.id), () => api.del(`/groups/${group.id}/invites/${invite.id}`));
  release();
  t.equal((await linked.answer).status, 200);
  t.equal((await deleted.answer).status, 204);
  t.same(verifyStore(server.deps, allInvariants).problems, []);
});

t.test('an invite link by email signs its user in only while that user holds the address; the invite stays to answer on /me', async (t) => {
  const server = await startServer(t);
  const api = platform(server);
  const ada = await person(server, 'ada@example.com');
  const { group } = await groupOf(server, ada);
  const made = await api.post(`/groups/${group.id}/invites`, { email: 'bob@example.com', roles: ['editor'] });
  t.equal(made.status, 200, made.text);
  const invitedId = made.body.invitation.ensured_user_id;
  const moved = await server.request('PATCH', `/applications/${server.app.id}/users/${invitedId}/data`, {
    app: server.app,
    body: { data: { email: 'carol@example.com' } },
  });
  t.equal(moved.status, 200, moved.text);
  const before = storeDigest(server.deps.store);
  const refused = await redeem(server, made.body.link);
  t.equal(refused.status, 410, refused.text);
  t.equal(refused.body.code, 'E_LINK_EXPIRED');
  t.equal(storeDigest(server.deps.store), before, 'nothing changed: bob@ is not proved on carol\'s account, the invite is pending');
  t.match((await api.get(`/groups/${group.id}/invites/${made.body.invitation.id}`)).body, { state: 'pending' });
});
