import t, { type Test } from 'tap';
import sharp from 'sharp';
import { startServer } from '../helpers/server.js';
import { startServerWithSchema } from '../helpers/schema.js';
import { verifyStore } from '../../src/verify/invariants.js';
import { allInvariants } from '../../src/verify/all.js';
import { userCountKey } from '../../src/features/users/directory.js';
import { encodeGroupEntries, encodeUserView } from '../../src/features/users/view-record.js';
import type { Deps } from '../../src/deps.js';
import { linkPath, requestLink, signInByLink } from '../helpers/sign-in.js';
import { tokenFor } from '../helpers/tokens.js';
import { INVITE_INDEX_DB } from '../../src/features/groups/invite-index.js';
import type { InviteContext } from '../../machines/invite.machine.js';
import { manualClock } from '../../src/lib/clock.js';
import { NEWEST_SESSIONS_DB } from '../../src/features/sessions/session-store.js';

/** Exactly these problems, in this order: a `match` alone would pass with more. */
function problemsAre(t: Test, problems: string[], patterns: RegExp[]): void {
  t.equal(problems.length, patterns.length, problems.join('\n'));
  t.match(problems, patterns);
}

/** Commits `write`, expects exactly these problems, then commits `repair`. */
async function damage(t: Test, deps: Deps, write: () => void, patterns: RegExp[], repair: () => void): Promise<void> {
  await deps.store.commit(write);
  problemsAre(t, verifyStore(deps, allInvariants).problems, patterns);
  await deps.store.commit(repair);
}

/** Removes the application's record alone, expects exactly these problems of what it held, then puts it back. */
async function withoutApp(t: Test, deps: Deps, appId: string, patterns: RegExp[]): Promise<void> {
  const apps = deps.store.db('apps');
  const app = apps.get(appId);
  await damage(t, deps, () => apps.remove(appId), patterns, () => apps.put(appId, app));
}

t.test('a consistent store passes every invariant; a broken counter, index or view is reported', async (t) => {
  const server = await startServer(t);
  const { deps } = server;
  for (let i = 0; i < 5; i++) {
    const put = await server.request('PUT', `/applications/${server.app.id}/users/u${i}/data`, {
      app: server.app,
      body: { data: { email: `u${i}@example.com` } },
    });
    t.equal(put.status, 200);
  }
  t.same(verifyStore(deps, allInvariants).problems, []);

  await deps.store.commit(() => deps.store.db('counters').put(userCountKey(server.app.id), 4));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/user count.*counter says 4, recount finds 5/]);
  await deps.store.commit(() => deps.store.db('counters').put(userCountKey(server.app.id), 5));

  const lookup = deps.store.db('user_lookup');
  const [firstKey] = [...lookup.getKeys({ limit: 1 })];
  await deps.store.commit(() => lookup.remove(firstKey));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/user lookup index.*is not indexed/]);
  await deps.store.commit(() => lookup.put(firstKey, true));

  // A user's record is its stored state: without it the user is gone, and its count and index entry say otherwise.
  const appId = server.app.id;
  const u3 = deps.profiles.records.getBinary([appId, 'u3'])!;
  await deps.store.commit(() => deps.profiles.records.remove([appId, 'u3']));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [
    /user count.*counter says 5, recount finds 4/,
    /user lookup index.*u3@example.com.*names no such user address/,
  ]);
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u3'], u3));

  // A card that no longer says what the user's data does: members would show a stale profile.
  const staleCard = encodeUserView({
    ...deps.profiles.renderBodies(deps.users.get(appId, 'u3')!, deps.apps.require(appId).schema),
    card: '{"email":"u3-before@example.com"}',
    schemaStamp: 'stale',
    access: deps.profiles.signedInView(appId, 'u3')!.access,
    groups: encodeGroupEntries([]),
  });
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u3'], staleCard));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/profile read model: member card of u3 .* is stale/]);
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u3'], u3));

  const bodies = deps.profiles.renderBodies(deps.users.get(appId, 'u2')!, deps.apps.require(appId).schema);
  const staleGroups = encodeUserView({
    ...bodies,
    schemaStamp: 'stale',
    access: deps.profiles.signedInView(appId, 'u2')!.access,
    groups: encodeGroupEntries([{ groupId: 'group_gone', member: '{"stale":true}' }]),
  });
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u2'], staleGroups));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/stored groups of u2.*stale/]);

  const staleAccess = encodeUserView({
    ...bodies,
    schemaStamp: 'stale',
    access: { state: 'enabled', createdAt: 0, revokedBefore: 0, revokedSessions: [] },
    groups: encodeGroupEntries([]),
  });
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u2'], staleAccess));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/access marks of u2.*stale/]);

  const disabledBody = encodeUserView({
    ...deps.profiles.renderBodies(deps.users.get(appId, 'u1')!, deps.apps.require(appId).schema),
    schemaStamp: 'stale',
    access: { ...deps.profiles.signedInView(appId, 'u1')!.access, state: 'disabled' },
    groups: encodeGroupEntries([]),
  });
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u1'], disabledBody));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/u1 is stale/, /access marks of u2.*stale/]);

  const u4 = deps.profiles.records.getBinary([appId, 'u4'])!;
  const u4Bodies = deps.profiles.renderBodies(deps.users.get(appId, 'u4')!, deps.apps.require(appId).schema);
  const staleMe = encodeUserView({
    ...u4Bodies,
    meHead: u4Bodies.meHead.replace('"data":{', '"data":{"stale":true,'),
    schemaStamp: deps.apps.require(appId).updated_at,
    access: deps.profiles.signedInView(appId, 'u4')!.access,
    groups: encodeGroupEntries([]),
  });
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u4'], staleMe));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/u1 is stale/, /access marks of u2.*stale/, /prepared \/me profile of u4.*stale/]);
  const unreadable = encodeUserView({ ...u4Bodies, platformHead: '{"broken', schemaStamp: '', access: deps.profiles.signedInView(appId, 'u4')!.access, groups: encodeGroupEntries([]) });
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u4'], unreadable));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/u1 is stale/, /access marks of u2.*stale/, /record of u4 .* is unreadable/]);
  await deps.store.commit(() => deps.profiles.records.put([appId, 'u4'], u4));

  const files = deps.store.db('user_files');
  await deps.store.commit(() => files.put([appId, 'u1', 'avatar'], { content_type: 'image/png', sha256: 'f'.repeat(64), bytes: Buffer.from('x') }));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [/u1/, /u2/, /profile files.*stored file avatar of u1.*not what its profile describes/]);
});

t.test('`svc verify` answers 0 on a sound data dir and 1 with the problems on a broken one', async (t) => {
  const { runCli } = await import('../helpers/child.js');
  const dataDir = t.testdir();
  const server = await startServer(t, { dataDir });
  await server.request('PUT', `/applications/${server.app.id}/users/a/data`, { app: server.app, body: { data: {} } });
  await server.close();
  const sound = await runCli(['verify'], { dataDir });
  t.equal(sound.code, 0, sound.stderr);
  t.same(JSON.parse(sound.stdout).problems, []);

  const reopened = await startServer(t, { dataDir });
  await reopened.deps.store.commit(() => reopened.deps.store.db('counters').put(userCountKey(server.app.id), 7));
  await reopened.close();
  const broken = await runCli(['verify'], { dataDir });
  t.equal(broken.code, 1);
  t.match(JSON.parse(broken.stdout).problems, [/counter says 7, recount finds 1/]);
});

t.test('damage that lookups and listings trust is reported: credential list, group names, invite index, described files, a missing app', async (t) => {
  const server = await startServer(t);
  const { deps } = server;
  const appId = server.app.id;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/applications/${appId}${path}`, { app: server.app, body });
  const group = (await api('POST', '/groups', { name: 'Team' })).body;
  await api('PUT', '/users/u1/data', { data: { email: 'u1@example.com' } });
  await api('POST', `/groups/${group.id}/invites`, { user_id: 'u1', roles: [] });
  t.same(verifyStore(deps, allInvariants).problems, []);

  const index = deps.store.db('app_credentials');
  await damage(t, deps, () => index.remove([appId, server.app.key]), [/app credentials: credential key_.* missing from its application's list/], () => index.put([appId, server.app.key], true));
  const names = deps.store.db('group_names');
  await damage(t, deps, () => names.put([appId, 'ghost', 'group_gone'], true), [/group indexes: name entry .*ghost.* does not name its group/], () => names.remove([appId, 'ghost', 'group_gone']));
  await damage(t, deps, () => names.remove([appId, 'team', group.id]), [/group indexes: group .* has no name entry/], () => names.put([appId, 'team', group.id], true));
  const invites = deps.store.db(INVITE_INDEX_DB);
  await damage(t, deps, () => invites.put([appId, 'u1', group.id, 'invite_gone'], true), [/group indexes: invite index entry .*invite_gone.* names no invite/], () => invites.remove([appId, 'u1', group.id, 'invite_gone']));
  await withoutApp(t, deps, appId, [
    /app credentials: credential .* belongs to application .* which does not exist/,
    /profile read model: user u1 belongs to application .* which does not exist/,
    new RegExp(`group count: group ${group.id} belongs to application ${appId}, which does not exist`),
  ]);
  t.same(verifyStore(deps, allInvariants).problems, []);
});

t.test('invite links: each entry names a pending invite (or, left by an older build, one accepted through that link) and its own link', async (t) => {
  const server = await startServer(t);
  const { deps } = server;
  const appId = server.app.id;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/applications/${appId}${path}`, { app: server.app, body });
  const group = (await api('POST', '/groups', { name: 'Team' })).body;
  const invitesPath = `/groups/${group.id}/invites`;
  const entries = deps.store.db<string>('invite_links');
  const entryOf = (inviteId: string) => [appId, group.id, inviteId];

  // Answered through its link or on /me, an invite drops its entry; a pending one keeps it.
  const ada = (await api('POST', invitesPath, { email: 'ada@example.com', roles: [] })).body;
  const adaRef = entries.get(entryOf(ada.invitation.id))!;
  const redeemed = await server.request('GET', linkPath(ada.link), { headers: { accept: 'application/json' } });
  t.equal(redeemed.status, 200);
  const bob = (await api('POST', invitesPath, { email: 'bob@example.com', roles: [] })).body;
  const dee = (await api('POST', invitesPath, { email: 'dee@example.com', roles: [] })).body;
  const deeRef = entries.get(entryOf(dee.invitation.id))!;
  const deeToken = (await tokenFor(server, { email: 'dee@example.com' })).token;
  t.equal((await server.request('POST', `/me/groups/${group.id}/invites/${dee.invitation.id}/reject`, { token: deeToken })).status, 200);
  const made = await server.request('POST', `/me/groups/${group.id}/invites`, { token: redeemed.body.access_token, body: { email: 'cy@example.com', roles: [] } });
  t.equal(made.status, 200, 'an invite made on /me, without a link');
  t.same([...entries.getKeys({})], [entryOf(bob.invitation.id)], 'only the pending invite keeps its entry');
  t.same(verifyStore(deps, allInvariants).problems, []);
  await deps.store.commit(() => entries.put(entryOf(ada.invitation.id), adaRef));
  t.same(verifyStore(deps, allInvariants).problems, [], 'the entry an older build left to an invite accepted through its spent link is healthy');

  const bobRef = entries.get(entryOf(bob.invitation.id))!;
  await damage(t, deps, () => entries.put(entryOf('invite_gone'), bobRef), [/invite links: link entry .*invite_gone.* names no invite/], () => entries.remove(entryOf('invite_gone')));
  await damage(
    t,
    deps,
    () => entries.put(entryOf(dee.invitation.id), deeRef),
    [new RegExp(`invite links: rejected invite ${dee.invitation.id} still has a link entry`)],
    () => entries.remove(entryOf(dee.invitation.id)),
  );
  await damage(
    t,
    deps,
    () => entries.put(entryOf(bob.invitation.id), adaRef),
    [new RegExp(`invite links: the link entry of invite ${bob.invitation.id} names a link made for something else`)],
    () => entries.put(entryOf(bob.invitation.id), bobRef),
  );
  const links = deps.store.db<{ state: string }>('magic_links');
  const adaLink = links.get(adaRef)!;
  await damage(
    t,
    deps,
    () => links.put(adaRef, { ...adaLink, state: 'pending' }),
    [new RegExp(`invite links: invite ${ada.invitation.id} is accepted while its link is pending`)],
    () => links.put(adaRef, adaLink),
  );
  t.same(verifyStore(deps, allInvariants).problems, []);
});

t.test('oidc credentials: each one sits under its client, which belongs to an app; a client may have none', async (t) => {
  const server = await startServer(t);
  const { deps } = server;
  const appId = server.app.id;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/applications/${appId}/oidc-clients${path}`, { app: server.app, body });
  const web = (await api('POST', '', { name: 'Web' })).body;
  const rotated = (await api('POST', `/${web.id}/credentials`)).body;
  t.equal((await api('DELETE', `/${web.id}/credentials/${web.credentials[0].client_id}`)).status, 204);
  const bare = (await api('POST', '', { name: 'Bare' })).body;
  t.equal((await api('DELETE', `/${bare.id}/credentials/${bare.credentials[0].client_id}`)).status, 204);
  const gone = (await api('POST', '', { name: 'Gone' })).body;
  t.equal((await api('DELETE', `/${gone.id}`)).status, 204);
  t.same(verifyStore(deps, allInvariants).problems, []);

  const credentials = deps.store.db('oidc_credentials');
  const key = [appId, web.id, rotated.oidc_client_configuration_id];
  const stored = credentials.get(key);
  const orphan = [appId, gone.id, rotated.oidc_client_configuration_id];
  await damage(t, deps, () => credentials.put(orphan, stored), [new RegExp(`oidc credentials: credential ${rotated.oidc_client_configuration_id} names no client ${gone.id}`)], () => credentials.remove(orphan));
  const elsewhere = [appId, web.id, 'oidcc_elsewhere'];
  await damage(
    t,
    deps,
    () => {
      credentials.remove(key);
      credentials.put(elsewhere, stored);
    },
    [/oidc credentials: credential oidcc_elsewhere of client .* disagrees with its key/],
    () => {
      credentials.remove(elsewhere);
      credentials.put(key, stored);
    },
  );
  const clients = deps.store.db<{ id: string; app_id: string }>('oidc_clients');
  const webClient = clients.get([appId, web.id])!;
  for (const change of [{ id: bare.id }, { app_id: 'app_elsewhere' }]) {
    await damage(
      t,
      deps,
      () => clients.put([appId, web.id], { ...webClient, ...change }),
      [new RegExp(`oidc credentials: client ${web.id} of ${appId} disagrees with its key`)],
      () => clients.put([appId, web.id], webClient),
    );
  }
  await withoutApp(t, deps, appId, [
    /app credentials: credential .* belongs to application .* which does not exist/,
    new RegExp(`oidc credentials: client ${web.id} belongs to application ${appId}, which does not exist`),
    new RegExp(`oidc credentials: client ${bare.id} belongs to application ${appId}, which does not exist`),
  ]);
  t.same(verifyStore(deps, allInvariants).problems, []);
});

t.test('signing keys: at least one, each a working pair under its kid; no report shows key material', async (t) => {
  const server = await startServer(t);
  const { deps } = server;
  const retired = deps.signingKeys.current().kid;
  const { kid } = await deps.signingKeys.rotate();
  t.same(verifyStore(deps, allInvariants).problems, [], 'a retired key and the current one');

  const keys = deps.store.db<any>('signing_keys');
  const stored = keys.get(kid);
  const retiredKey = keys.get(retired);
  const secrets = [stored.privateJwk.d, retiredKey.privateJwk.d];
  const broken = (change: object, pattern: RegExp) => ({ write: () => keys.put(kid, { ...stored, ...change }), pattern, repair: () => keys.put(kid, stored) });
  const cases = [
    { write: () => keys.put('sig-0', stored), pattern: /signing keys: key sig-0 is stored under another kid/, repair: () => keys.remove('sig-0') },
    broken({ createdAt: undefined }, /has no creation time/),
    broken({ publicJwk: { ...stored.publicJwk, alg: 'RS256' } }, /does not name its kid, alg EdDSA and use sig/),
    broken({ privateJwk: { ...stored.privateJwk, kid: retired } }, /does not name its kid, alg EdDSA and use sig/),
    broken({ publicJwk: { ...stored.publicJwk, d: stored.privateJwk.d } }, /holds private material in its public half/),
    broken({ privateJwk: { ...stored.privateJwk, d: 'not-a-key' } }, /has a private half that does not parse/),
    broken({ publicJwk: { ...stored.publicJwk, kty: 'RSA' } }, /has a public half that does not parse/),
    broken({ publicJwk: { ...retiredKey.publicJwk, kid } }, /has a public half that does not match its private half/),
    {
      write: () => {
        keys.remove(kid);
        keys.remove(retired);
      },
      pattern: /signing keys: there is no signing key/,
      repair: () => {
        keys.put(kid, stored);
        keys.put(retired, retiredKey);
      },
    },
  ];
  for (const { write, pattern, repair } of cases) {
    await deps.store.commit(write);
    const { problems } = verifyStore(deps, allInvariants);
    problemsAre(t, problems, [pattern]);
    t.notOk(secrets.some((d) => problems.join('\n').includes(d)), 'no private key material in the report');
    await deps.store.commit(repair);
  }
  t.same(verifyStore(deps, allInvariants).problems, []);
});

t.test("an invite whose user is gone, or was made again after it, is reported (builds before format 10 kept a deleted user's answered invites)", async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const { deps } = server;
  const appId = server.app.id;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/applications/${appId}${path}`, { app: server.app, body });
  const group = (await api('POST', '/groups', { name: 'Team' })).body;
  for (const user of ['boss', 'ada']) t.equal((await api('PUT', `/users/${user}/data`, { data: {} })).status, 200);
  t.equal((await api('POST', `/groups/${group.id}/members`, { user_id: 'boss', roles: ['owner'] })).status, 200);
  const invite = (await api('POST', `/groups/${group.id}/invites`, { user_id: 'ada', roles: [] })).body.invitation;
  const { token } = await tokenFor(server, { user_id: 'ada' });
  t.equal((await server.request('POST', `/me/groups/${group.id}/invites/${invite.id}/accept`, { token })).status, 200);
  const inviteKey = [appId, group.id, invite.id];
  const memberId = deps.runtime.read<InviteContext>('invite', inviteKey)!.context.member_id;
  t.equal((await api('DELETE', `/groups/${group.id}/members/${memberId}`)).status, 204);
  t.same(verifyStore(deps, allInvariants).problems, []);

  // What an older build left: ada deleted, her accepted invite (and the group that counts it) kept.
  const indexKey = [appId, 'ada', group.id, invite.id];
  const groupKey = [appId, group.id];
  const kept = {
    invite: deps.runtime.table('invite').get(inviteKey)!,
    group: deps.runtime.table('group').get(groupKey)!,
    view: deps.profiles.groupViews.getBinary(groupKey)!,
  };
  t.equal((await api('DELETE', '/users/ada/data')).status, 204);
  await deps.store.commit(() => {
    deps.runtime.table('invite').put(inviteKey, kept.invite);
    deps.runtime.table('group').put(groupKey, kept.group);
    deps.profiles.groupViews.put(groupKey, kept.view);
    deps.store.db(INVITE_INDEX_DB).put(indexKey, true);
  });
  problemsAre(t, verifyStore(deps, allInvariants).problems, [new RegExp(`invited users: invite ${invite.id} names user ada, which does not exist`)]);

  clock.advance(1000);
  t.equal((await api('PUT', '/users/ada/data', { data: {} })).status, 200);
  problemsAre(t, verifyStore(deps, allInvariants).problems, [new RegExp(`invited users: invite ${invite.id} names user ada, made after the invite`)]);
});

t.test("a preview left of a file that is gone or holds other bytes is reported (a deleted user's thumbnail kept)", async (t) => {
  const server = await startServerWithSchema(t, { fields: { avatar: { type: 'image', user_readable: true } } });
  const { deps } = server;
  const appId = server.app.id;
  const base = `/applications/${appId}/users/ada/data`;
  const image = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c00' } }).png().toBuffer();
  const body = new FormData();
  body.set('data', '{}');
  body.set('avatar', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'ada.png');
  t.equal((await server.request('PUT', base, { app: server.app, rawBody: body })).status, 200);
  t.equal((await server.request('GET', `${base}/fields/avatar?preview=small`, { app: server.app })).status, 200);
  const previews = deps.store.db<{ sha256: string }>('user_file_previews');
  const key = [appId, 'ada', 'avatar', 'small'];
  const preview = previews.get(key)!;
  t.ok(preview, 'the preview is cached');
  t.same(verifyStore(deps, allInvariants).problems, []);

  await damage(t, deps, () => previews.put(key, { ...preview, sha256: 'f'.repeat(64) }), [/profile files: preview small of avatar of ada of .* is not of a stored file/], () => previews.put(key, preview));
  const orphan = [appId, 'gone', 'avatar', 'small'];
  await damage(t, deps, () => previews.put(orphan, preview), [/profile files: preview small of avatar of gone of .* is not of a stored file/], () => previews.remove(orphan));
  t.same(verifyStore(deps, allInvariants).problems, []);
});

t.test('sessions and magic links left of a user that is gone, or made again after them, are reported', async (t) => {
  const clock = manualClock();
  const server = await startServer(t, { clock });
  const { deps } = server;
  const appId = server.app.id;
  const { app_user_id: userId } = await signInByLink(server, 'ada@example.com');
  t.equal((await requestLink(server, 'ada@example.com')).status, 200);
  t.same(verifyStore(deps, allInvariants).problems, []);

  // What a deletion that forgot them would leave: the user gone, its sessions and links kept whole.
  const tables = ['sessions', 'refresh_tokens', 'session_tokens', NEWEST_SESSIONS_DB, 'magic_links', 'user_magic_links'].map((name) => deps.store.db(name));
  const kept = tables.map((table) => [...table.getRange({})]);
  t.equal((await server.request('DELETE', `/applications/${appId}/users/${userId}/data`, { app: server.app })).status, 204);
  await deps.store.commit(() => tables.forEach((table, i) => kept[i].forEach(({ key, value }) => table.put(key, value))));
  const gone = `user ${userId} of ${appId}, which does not exist`;
  problemsAre(t, verifyStore(deps, allInvariants).problems, [
    new RegExp(`refresh token chains: session .* belongs to ${gone}`),
    new RegExp(`newest sessions: newest session of ${gone}`),
    new RegExp(`magic link index: a link of ${gone}`),
    new RegExp(`magic link index: a link of ${gone}`),
  ]);

  // The ID made again later: the links left are not of this user (its redemption refuses them).
  clock.advance(1000);
  t.equal((await server.request('PUT', `/applications/${appId}/users/${userId}/data`, { app: server.app, body: { data: {} } })).status, 200);
  const before = `a link of user ${userId} of ${appId} was made before that user`;
  problemsAre(t, verifyStore(deps, allInvariants).problems, [new RegExp(`magic link index: ${before}`), new RegExp(`magic link index: ${before}`)]);
});

t.test("a session newer than its user's recorded newest one is reported", async (t) => {
  const server = await startServer(t);
  const { deps } = server;
  await signInByLink(server, 'ada@example.com');
  const newest = deps.store.db(NEWEST_SESSIONS_DB);
  const [{ key, value: sid }] = [...newest.getRange({})];
  t.same(verifyStore(deps, allInvariants).problems, []);
  // A sign-out-everywhere would place its watermark below this session's start.
  await deps.store.commit(() => newest.remove(key));
  problemsAre(t, verifyStore(deps, allInvariants).problems, [new RegExp(`newest sessions: session ${sid} is newer than its user's newest session`)]);
});

t.test('a record that cannot be read stops no other check: verify reports it with everything else', async (t) => {
  const dataDir = t.testdir();
  const server = await startServer(t, { dataDir });
  const { deps } = server;
  const appId = server.app.id;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/applications/${appId}${path}`, { app: server.app, body });
  const group = (await api('POST', '/groups', { name: 'Team' })).body;
  t.equal((await api('PUT', '/users/ada/data', { data: {} })).status, 200);
  t.equal((await api('POST', `/groups/${group.id}/invites`, { user_id: 'ada', roles: [] })).status, 200);
  const bodies = deps.profiles.renderBodies(deps.users.get(appId, 'ada')!, deps.apps.require(appId).schema);
  const unreadable = encodeUserView({ ...bodies, platformHead: '{"broken', schemaStamp: '', access: deps.profiles.signedInView(appId, 'ada')!.access, groups: encodeGroupEntries([]) });
  await deps.store.commit(() => {
    deps.profiles.records.put([appId, 'ada'], unreadable);
    deps.store.db('counters').put(userCountKey(appId), 7);
    deps.store.db('user_files').put([appId, 'ada', 'avatar'], { content_type: 'image/png', sha256: 'f'.repeat(64), bytes: Buffer.from('x') });
  });
  await server.close();

  const { runCli } = await import('../helpers/child.js');
  const verified = await runCli(['verify'], { dataDir });
  t.equal(verified.code, 1, verified.stderr);
  problemsAre(t, JSON.parse(verified.stdout).problems, [
    /user count.*counter says 7, recount finds 1/,
    /profile read model: record of ada .* is unreadable/,
    /profile files: could not finish \(SyntaxError\): a record it reads is unreadable/,
  ]);
});
