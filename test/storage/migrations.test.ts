import t, { type Test } from 'tap';
import pino from 'pino';
import { openStore, type Key } from '../../src/storage/store.js';
import { FORMAT_VERSION, migrate, storedFormatVersion } from '../../src/storage/migrations.js';
import { loadConfig } from '../../src/config.js';
import { openServices } from '../../src/services.js';
import type { Deps } from '../../src/deps.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { signInByLink } from '../helpers/sign-in.js';
import { manualClock } from '../../src/lib/clock.js';
import { NEWEST_SESSIONS_DB } from '../../src/features/sessions/session-store.js';
import { persistedUser, USER_MACHINE_VERSION, type UserContext } from '../../machines/user.machine.js';
import { format6Parts } from '../../src/features/users/view-record.js';
import { USER_LOOKUP_DB } from '../../src/features/users/directory.js';
import { INVITE_INDEX_DB } from '../../src/features/groups/invite-index.js';
import { GROUP_NAMES_DB } from '../../src/features/groups/names.js';
import { asFormat5Record, asFormat6Record, asFormat7Record } from '../helpers/view-records.js';

const logger = pino({ level: 'silent' });

const PREVIOUS_FORMAT = FORMAT_VERSION - 1;

/** A store of its own stamped with the format before this build's, closed when `t` ends. */
async function storeOfPreviousFormat(t: Test) {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  await store.commit(() => store.db('meta').put('format_version', PREVIOUS_FORMAT));
  return store;
}

/** A started server on its own data dir with a signed-in user who owns one group, `kept`. */
async function ownerOfAGroup(t: Test) {
  const server = await startServer(t, { dataDir: t.testdir() });
  const { app } = server;
  const owner = await signInByLink(server, 'owner@example.com');
  const group = (await server.request('POST', '/me/groups', { token: owner.access_token, body: { name: 'kept' } })).body.group;
  const userId = owner.app_user_id;
  return { server, app, owner, group, userId, profilePath: `/applications/${app.id}/users/${userId}/data` };
}

/** Every invariant of `svc verify` holds. */
async function noProblems(t: Test, deps: Deps): Promise<void> {
  const { verifyStore } = await import('../../src/verify/invariants.js');
  const { allInvariants } = await import('../../src/verify/all.js');
  t.same(verifyStore(deps, allInvariants).problems, []);
}

/**
 * Stages the users' snapshots as formats up to 4 kept them, in a table of their own (format 5 keeps
 * them in the view records); `change` may alter a snapshot's context on the way.
 */
function stageFormat4Users(deps: Deps, change: (context: UserContext) => UserContext = (context) => context): void {
  const table = deps.store.db('actor:user');
  for (const key of deps.profiles.records.getKeys({})) {
    const [appId, userId] = key as [string, string];
    const user = deps.users.get(appId, userId)!;
    table.put(key, { v: USER_MACHINE_VERSION, snapshot: persistedUser(user.state, change(user.context)) });
  }
}

/**
 * Leaves the data dir of `server` as format `format` had it: up to format 4, its users' snapshots
 * staged as those formats kept them (through `change`); then `stage`, in one transaction. Starts a
 * server on it again, which moves it to the current format.
 */
async function reopenedAsFormat(
  t: Test,
  server: TestServer,
  format: number,
  stage: (deps: Deps) => void,
  change?: (context: UserContext) => UserContext,
): Promise<TestServer> {
  const { deps } = server;
  const stagesSnapshots = format <= 4;
  // Opened outside the transaction (a table first opened inside one that rolls back is unusable).
  if (stagesSnapshots) deps.store.db('actor:user');
  await deps.store.commit(() => {
    if (stagesSnapshots) stageFormat4Users(deps, change);
    stage(deps);
    deps.store.db('meta').put('format_version', format);
  });
  await server.close();
  const reopened = await startServer(t, { dataDir: deps.store.path });
  t.equal(storedFormatVersion(reopened.deps.store), FORMAT_VERSION);
  return reopened;
}

t.test('a fresh data dir is stamped with the current format', async (t) => {
  const store = openStore(t.testdir());
  t.teardown(() => store.close());
  t.equal(storedFormatVersion(store), undefined);
  t.equal(await migrate(store, logger, {}), FORMAT_VERSION);
  t.equal(storedFormatVersion(store), FORMAT_VERSION);
  t.equal(await migrate(store, logger, {}), FORMAT_VERSION, 'a second start changes nothing');
});

t.test('an older format is moved forward step by step, each step with its version in one transaction', async (t) => {
  const store = await storeOfPreviousFormat(t);
  const steps = { [PREVIOUS_FORMAT]: (s: typeof store) => s.db('moved').put('k', 'migrated') };
  t.equal(await migrate(store, logger, steps), FORMAT_VERSION);
  t.equal(store.db('moved').get('k'), 'migrated');
  t.equal(storedFormatVersion(store), FORMAT_VERSION);
});

t.test('a step another migration made meanwhile is not made again', async (t) => {
  const store = await storeOfPreviousFormat(t);
  const counts = store.db<number>('moved');
  // Counting, so a step made twice shows: real steps are not all safe to make on data already moved.
  const steps = { [PREVIOUS_FORMAT]: (s: typeof store) => counts.put('runs', (counts.get('runs') ?? 0) + 1) };
  // Both read the old format before either commits, as a server and an upgrade child outliving its server would.
  t.same(await Promise.all([migrate(store, logger, steps), migrate(store, logger, steps)]), [FORMAT_VERSION, FORMAT_VERSION]);
  t.equal(counts.get('runs'), 1);
  t.equal(storedFormatVersion(store), FORMAT_VERSION);
});

t.test('a failing step keeps the old format and none of its writes', async (t) => {
  const store = await storeOfPreviousFormat(t);
  // Opened before the transaction: a database first opened inside one that rolls back is unusable.
  const moved = store.db('moved');
  const failing = {
    [PREVIOUS_FORMAT]: (s: typeof store) => {
      s.db('moved').put('k', 'half done');
      throw new Error('step failed');
    },
  };
  await t.rejects(migrate(store, logger, failing), /step failed/);
  t.equal(storedFormatVersion(store), PREVIOUS_FORMAT);
  t.equal(moved.get('k'), undefined);
  await t.rejects(migrate(store, logger, {}), /No migration from data format/);
});

t.test('a data dir of a newer format is refused at start', async (t) => {
  const dataDir = t.testdir();
  const store = openStore(dataDir);
  await store.commit(() => store.db('meta').put('format_version', FORMAT_VERSION + 1));
  await t.rejects(migrate(store, logger, {}), new RegExp(`format ${FORMAT_VERSION + 1}, newer than this build understands`));
  t.equal(storedFormatVersion(store), FORMAT_VERSION + 1, 'left as it was');
  await store.close();
  const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent' });
  await t.rejects(openServices(config, { logger }), /newer than this build understands/);
});

t.test('format 1 → current: the read model is rendered anew into one record per user, the old databases dropped', async (t) => {
  let server = await startServer(t, { dataDir: t.testdir() });
  const app = server.app;
  const appId = app.id;
  for (const id of ['a', 'b']) {
    const put = await server.request('PUT', `/applications/${appId}/users/${id}/data`, { app, body: { data: { n: id } } });
    t.equal(put.status, 200);
  }
  const expected = (await server.request('GET', `/applications/${appId}/users/a/data`, { app })).body;
  // A data dir as format 1 left it: no view records, the old read-model databases in their place.
  const { deps } = server;
  const old = deps.store.db('profile_platform', { encoding: 'binary' });
  server = await reopenedAsFormat(t, server, 1, () => {
    for (const id of ['a', 'b']) deps.profiles.records.remove([appId, id]);
    old.put([appId, 'a'], Buffer.from('{"stale":true}'));
  });
  t.notOk(server.deps.store.hasDb('profile_platform'), 'the old read model is dropped');
  t.notOk(server.deps.store.hasDb('actor:user'), 'so is the old table of user snapshots');
  const read = await server.request('GET', `/applications/${appId}/users/a/data`, { app });
  t.equal(read.status, 200);
  t.same(read.body, expected);
  t.equal((await server.request('GET', `/applications/${appId}/users/b/data`, { app })).body.data.n, 'b');
  await noProblems(t, server.deps);
});

t.test('format 3 → 4: groups are rendered once and view records name them; profiles read and change as before', async (t) => {
  const { app, owner, group, userId, profilePath, server: started } = await ownerOfAGroup(t);
  let server = started;
  const expected = (await server.request('GET', profilePath, { app })).body;
  t.equal(expected.groups.length, 1);
  // The data dir as format 3 left it: `{group, member}` entries, no group renderings, and a view
  // record of five parts (platform body, /me body, schema stamp, access, groups JSON).
  const { deps } = server;
  const pairs = JSON.stringify(expected.groups);
  const parts = [JSON.stringify(expected), JSON.stringify(expected), 'stale', '{}', pairs].map((text) => Buffer.from(text));
  const header = Buffer.alloc(4 * parts.length);
  parts.forEach((part, index) => header.writeUInt32LE(part.length, index * 4));
  server = await reopenedAsFormat(t, server, 3, () => {
    deps.profiles.memberships.put([app.id, userId, group.id], expected.groups[0]);
    // Entries are rebuilt from the member records, so one that outlived its member goes.
    deps.profiles.memberships.put([app.id, userId, 'group_gone'], { group: {}, member: {} });
    deps.profiles.groupViews.remove([app.id, group.id]);
    deps.profiles.records.put([app.id, userId], Buffer.concat([header, ...parts]));
  });
  t.same((await server.request('GET', profilePath, { app })).body, expected);
  const write = await server.request('PATCH', profilePath, { app, body: { data: { n: 1 } } });
  t.equal(write.status, 200);
  t.same(write.body.groups, expected.groups, 'a profile change after the migration still lists the group');
  const renamed = await server.request('PUT', `/me/groups/${group.id}`, { token: owner.access_token, body: { name: 'renamed' } });
  t.equal(renamed.status, 200);
  t.equal((await server.request('GET', profilePath, { app })).body.groups[0].group.name, 'renamed');
  await noProblems(t, server.deps);
});

t.test('format 4 → 5: users are rendered from their snapshots into their records, which then hold them', async (t) => {
  const { app, owner, group, userId, profilePath, server: started } = await ownerOfAGroup(t);
  let server = started;
  const before = (await server.request('GET', profilePath, { app })).body;
  // The snapshot is what format 4 held as the user; the record only a read model of it.
  const { deps } = server;
  // What a step 1 → 2 of an older build left behind, and a record whose user was gone.
  const leftover = deps.store.db('profile_me', { encoding: 'binary' });
  const orphan = deps.profiles.records.getBinary([app.id, userId])!;
  const fromSnapshot = (context: UserContext) => ({ ...context, data: { ...context.data, from: 'snapshot' } });
  const { records } = deps.profiles;
  const keys = [...records.getKeys({})];
  server = await reopenedAsFormat(t, server, 4, () => {
    // Format 4 laid records out as format 5 did: six parts, the access marks as JSON text.
    for (const key of keys) records.put(key, asFormat5Record(records.getBinary(key)!));
    leftover.put([app.id, userId], Buffer.from('{}'));
    deps.profiles.records.put([app.id, 'orphan'], orphan);
  }, fromSnapshot);
  t.notOk(server.deps.store.hasDb('actor:user'), 'the table of user snapshots is dropped');
  t.notOk(server.deps.store.hasDb('profile_me'), 'so are the format-1 leftovers');
  t.equal((await server.request('GET', `/applications/${app.id}/users/orphan/data`, { app })).status, 404, 'a record without a snapshot is no user');
  const after = (await server.request('GET', profilePath, { app })).body;
  t.same(after, { ...before, data: { ...before.data, from: 'snapshot' } }, 'rendered from the snapshot, its group kept');
  t.equal(after.groups[0].group.id, group.id);
  const me = await server.request('GET', `/me/applications/${app.id}/data`, { token: owner.access_token });
  t.equal(me.status, 200, 'its session still holds');
  const write = await server.request('PATCH', profilePath, { app, body: { data: { n: 1 } } });
  t.same(write.body.data, { ...after.data, n: 1 });
  await noProblems(t, server.deps);
});

t.test('format 5 → 6: access marks become binary, and every session, sign-out and disable holds as before', async (t) => {
  let server = await startServer(t, { dataDir: t.testdir() });
  const { app } = server;
  const kept = await signInByLink(server, 'ada@example.com');
  const signedOut = await signInByLink(server, 'ada@example.com');
  t.equal((await server.request('POST', `/me/applications/${app.id}/signout`, { token: signedOut.access_token })).status, 204);
  const disabled = await signInByLink(server, 'bob@example.com');
  const state = await server.request('POST', `/applications/${app.id}/users/${disabled.app_user_id}/state`, { app, body: { state: 'disabled' } });
  t.equal(state.status, 200);
  const everywhere = await signInByLink(server, 'cy@example.com');
  const signOutAll = await server.request('POST', `/applications/${app.id}/users/${everywhere.app_user_id}/signout`, {
    app,
    body: { sign_out_all: true },
  });
  t.equal(signOutAll.status, 204);
  const afterwards = await signInByLink(server, 'cy@example.com');
  const me = (token: string) => server.request('GET', `/me/applications/${app.id}/data`, { token });
  const before = await me(kept.access_token);
  const { records } = server.deps.profiles;
  const keys = [...records.getKeys({})];
  server = await reopenedAsFormat(t, server, 5, () => {
    for (const key of keys) records.put(key, asFormat5Record(records.getBinary(key)!));
  });
  for (const key of keys) {
    const record = server.deps.profiles.records.getBinary(key)!;
    t.equal(format6Parts(record), undefined, `${String(key)}: moved on to this build's layout`);
  }
  t.notOk(server.deps.store.hasDb('actor:user'), 'format 5 had no snapshot table, and none appears');
  t.same((await me(kept.access_token)).body, before.body, 'a live session still reads its profile');
  const refused = await me(signedOut.access_token);
  t.equal(refused.body.code, 'E_TOKEN_REVOKED', 'a signed-out session stays out');
  t.equal((await me(disabled.access_token)).body.code, 'E_USER_DISABLED', 'a disabled user stays disabled');
  t.equal((await me(everywhere.access_token)).body.code, 'E_TOKEN_REVOKED', 'a session ended by a sign-out everywhere stays out');
  t.equal((await me(afterwards.access_token)).status, 200, 'a session started after that sign-out still holds');
  await noProblems(t, server.deps);
});

t.test('format 6 → 7: each record gains its member card; profiles, members and every other byte read as before', async (t) => {
  const { app, owner, group, userId, profilePath, server: started } = await ownerOfAGroup(t);
  let server = started;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/applications/${app.id}${path}`, { app, body });
  t.equal((await api('PATCH', `/users/${userId}/data`, { data: { first_name: 'Ada', nickname: 'x'.repeat(10_000) } })).status, 200);
  t.equal((await api('PUT', '/users/named/data', { data: { last_name: 'Byron', email: 'named@example.com', first_name: 'Ann' } })).status, 200);
  t.equal((await api('PUT', '/users/bare/data', { data: { n: 1 } })).status, 200);
  for (const user of ['named', 'bare']) t.equal((await api('POST', `/groups/${group.id}/members`, { user_id: user, roles: [] })).status, 200);
  t.equal((await api('PUT', '/users/outside/data', { data: { email: 'outside@example.com' } })).status, 200);
  const users = [userId, 'named', 'bare', 'outside'];

  /** What the migration must leave as it was: each profile's and member's text, and every record's bytes. */
  const answers = async () => ({
    profiles: await Promise.all(users.map(async (user) => (await api('GET', `/users/${user}/data`)).text)),
    members: (await api('GET', `/groups/${group.id}/members`)).text,
    mine: (await server.request('GET', '/me/groups', { token: owner.access_token })).text,
    records: users.map((user) => server.deps.profiles.records.getBinary([app.id, user])),
  });
  const before = await answers();
  t.same(
    JSON.parse(before.members).results.map((member: any) => member.profile),
    [
      { user_id: userId, email: 'owner@example.com', first_name: 'Ada' },
      { user_id: 'named', email: 'named@example.com', first_name: 'Ann', last_name: 'Byron' },
      { user_id: 'bare' },
    ],
  );
  const { records } = server.deps.profiles;
  server = await reopenedAsFormat(t, server, 6, () => {
    for (const user of users) records.put([app.id, user], asFormat6Record(records.getBinary([app.id, user])!));
  });
  t.strictSame(await answers(), before, 'the same answers, and records byte for byte as this build renders them');
  const write = await server.request('PATCH', profilePath, { app, body: { data: { last_name: 'King' } } });
  t.equal(write.status, 200);
  const member = (await api('GET', `/groups/${group.id}/members?lookup_filter=${userId}`)).body.results[0];
  t.same(member.profile, { user_id: userId, email: 'owner@example.com', first_name: 'Ada', last_name: 'King' }, 'and the card follows a change');
  await noProblems(t, server.deps);
});

t.test("format 7 → 8: a /me body shows verified_data only where its user may read the address; other apps' records stay as they were", async (t) => {
  let server = await startServer(t, { dataDir: t.testdir() });
  const { app, deps } = server;
  await deps.apps.update(app.id, { schema: { fields: { email: { type: 'string' } }, allow_unknown_fields: true } });
  const { id } = await deps.apps.create('open');
  const open = { id, ...(await deps.apps.createCredential(id)) };
  const hidden = await signInByLink(server, 'ada@example.com');
  const shown = await signInByLink(server, 'bob@example.com', open);
  const me = (appId: string, token: string) => server.request('GET', `/me/applications/${appId}/data`, { token });
  t.same((await me(app.id, hidden.access_token)).body.verified_data, {}, 'rendered by this build');

  const { records } = deps.profiles;
  const keys = [[app.id, hidden.app_user_id], [open.id, shown.app_user_id]];
  const staged = keys.map((key) => asFormat7Record(records.getBinary(key)!));
  server = await reopenedAsFormat(t, server, 7, () => keys.forEach((key, i) => records.put(key, staged[i])));
  t.same((await me(app.id, hidden.access_token)).body.verified_data, {}, 'an email the app keeps from its users is gone');
  t.same((await me(open.id, shown.access_token)).body.verified_data, { email: 'bob@example.com' }, 'a readable one stays');
  t.strictSame(server.deps.profiles.records.getBinary(keys[1]), staged[1], 'a record of an app that hides no address is kept byte for byte');
  await noProblems(t, server.deps);
});

t.test('format 8 → 9: addresses are indexed in NFC, so every form of an accented address finds its user; other entries stay', async (t) => {
  let server = await startServer(t, { dataDir: t.testdir() });
  const { app } = server;
  const decomposed = 'Jose\u0301@example.com';
  for (const [user, email] of [['jose', decomposed], ['plain', 'plain@example.com']]) {
    t.equal((await server.request('PUT', `/applications/${app.id}/users/${user}/data`, { app, body: { data: { email } } })).status, 200);
  }
  const lookup = server.deps.store.db(USER_LOOKUP_DB);
  const indexed = [...lookup.getKeys({})] as Key[][];
  // Format 8 indexed an address lower-cased, as it was written: here decomposed.
  const staged = indexed.map(([appId, kind, address, ...rest]) => [appId, kind, (address as string).normalize('NFD'), ...rest]);
  t.not(JSON.stringify(staged), JSON.stringify(indexed), 'format 8 keyed the accented address otherwise');
  server = await reopenedAsFormat(t, server, 8, () => {
    for (const key of indexed) lookup.remove(key);
    for (const key of staged) lookup.put(key, true);
  });
  t.same([...server.deps.store.db(USER_LOOKUP_DB).getKeys({})], indexed, 'the entries this build makes, the plain one as it was');
  const list = (value: string) =>
    server.request('GET', `/applications/${app.id}/users/data?lookup_filter=${encodeURIComponent(value)}`, { app });
  for (const form of [decomposed, decomposed.normalize('NFC')]) {
    t.same((await list(form)).body.results.map((p: { svc_user: string }) => p.svc_user), ['jose'], JSON.stringify(form));
  }
  await noProblems(t, server.deps);
});

t.test('format 9 → 10: the invite index is keyed by user first, so deleting a user takes its answered invites along', async (t) => {
  let server = await startServer(t, { dataDir: t.testdir() });
  const { app } = server;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/applications/${app.id}${path}`, { app, body });
  const group = (await api('POST', '/groups', { name: 'Team' })).body;
  const invited = [];
  for (const user of ['u1', 'u2']) {
    t.equal((await api('PUT', `/users/${user}/data`, { data: {} })).status, 200);
    invited.push((await api('POST', `/groups/${group.id}/invites`, { user_id: user, roles: [] })).body.invitation.id);
  }
  const index = server.deps.store.db(INVITE_INDEX_DB);
  const entries = [...index.getKeys({})] as Key[][];
  t.equal(entries.length, 2);
  server = await reopenedAsFormat(t, server, 9, (deps) => {
    const legacy = deps.store.db('group_invites_by_user');
    for (const [appId, userId, groupId, inviteId] of entries) {
      index.remove([appId, userId, groupId, inviteId]);
      legacy.put([appId, groupId, userId, inviteId], true);
    }
  });
  t.same([...server.deps.store.db(INVITE_INDEX_DB).getKeys({})], entries, 'the entries this build makes');
  t.notOk(server.deps.store.hasDb('group_invites_by_user'), 'the format-9 index is gone');
  const listed = await api('GET', `/groups/${group.id}/invites?ensured_user_id=u1`);
  t.same(listed.body.results.map((invite: { id: string }) => invite.id), [invited[0]]);
  t.equal((await api('DELETE', '/users/u1/data')).status, 204);
  t.equal((await api('GET', `/groups/${group.id}/invites/${invited[0]}`)).status, 404, "the deleted user's invite went with it");
  t.equal((await api('GET', `/groups/${group.id}/invites/${invited[1]}`)).status, 200);
  await noProblems(t, server.deps);
});

t.test('format 10 → 11: group names are indexed in NFC, so every form of an accented name finds its group; other entries stay', async (t) => {
  let server = await startServer(t, { dataDir: t.testdir() });
  const { app } = server;
  const decomposed = 'Cafe\u0301';
  const ids = [];
  for (const name of [decomposed, 'Plain']) ids.push((await server.request('POST', `/applications/${app.id}/groups`, { app, body: { name } })).body.id);
  const names = server.deps.store.db(GROUP_NAMES_DB);
  const indexed = [...names.getKeys({})] as Key[][];
  // Format 10 keyed a name lower-cased, as it was written: here decomposed.
  const staged = indexed.map(([appId, name, groupId]) => [appId, (name as string).normalize('NFD'), groupId]);
  t.not(JSON.stringify(staged), JSON.stringify(indexed), 'format 10 keyed the accented name otherwise');
  server = await reopenedAsFormat(t, server, 10, () => {
    for (const key of indexed) names.remove(key);
    for (const key of staged) names.put(key, true);
  });
  t.same([...server.deps.store.db(GROUP_NAMES_DB).getKeys({})], indexed, 'the entries this build makes, the plain one as it was');
  const list = (value: string) => server.request('GET', `/applications/${app.id}/groups?lookup_filter=${encodeURIComponent(value)}`, { app });
  for (const form of [decomposed, decomposed.normalize('NFC')]) {
    t.same((await list(form)).body.results.map((g: { id: string }) => g.id), [ids[0]], JSON.stringify(form));
  }
  await noProblems(t, server.deps);
});

t.test("format 11 → 12: each user's newest live session is recorded, so sign-out-everywhere reaches it once it has ended", async (t) => {
  // Sessions started an hour ahead of the system clock, which the server reopened below reads: as if NTP stepped it back.
  const clock = manualClock(Date.now() + 3600_000);
  let server = await startServer(t, { clock, dataDir: t.testdir() });
  const { app } = server;
  const ada = [await signInByLink(server, 'ada@example.com')];
  clock.advance(1000);
  ada.push(await signInByLink(server, 'ada@example.com'));
  const bob = await signInByLink(server, 'bob@example.com');
  const newest = server.deps.store.db(NEWEST_SESSIONS_DB);
  const recorded = [...newest.getRange({})];
  t.equal(recorded.length, 2, 'one entry per user');
  server = await reopenedAsFormat(t, server, 11, () => {
    for (const { key } of recorded) newest.remove(key);
  });
  t.same([...server.deps.store.db(NEWEST_SESSIONS_DB).getRange({})], recorded, 'the entries this build makes');
  await noProblems(t, server.deps);

  // A refresh sign-out ends Ada's session records; her access tokens live on until sign-out-everywhere.
  const signOut = (sign_out_all: boolean) =>
    server.request('POST', `/applications/${app.id}/users/${ada[0].app_user_id}/signout`, { app, body: { sign_out_all } });
  const probe = (token: string) => server.request('GET', `/me/applications/${app.id}/data`, { token });
  t.equal((await signOut(false)).status, 204);
  t.equal((await probe(ada[1].access_token)).status, 200);
  t.equal((await signOut(true)).status, 204);
  for (const session of ada) t.equal((await probe(session.access_token)).body.code, 'E_TOKEN_REVOKED');
  t.equal((await probe(bob.access_token)).status, 200);
});
