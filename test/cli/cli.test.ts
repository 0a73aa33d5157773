import t from 'tap';
import { writeFileSync, readdirSync, existsSync, readFileSync, statSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { runCli, runEntry } from '../helpers/child.js';
import { startServer } from '../helpers/server.js';
import { platformProbe, probePath } from '../helpers/probe.js';
import { openStore } from '../../src/storage/store.js';

const dir = t.testdir({
  'schema.json': JSON.stringify({ fields: { nickname: { type: 'string', user_writable: true } } }),
  'bad-schema.json': JSON.stringify({ fields: { nickname: { type: 'date' } } }),
  'not-json.json': '{"fields":',
  // As a JSON body over HTTP: which copy counts would be a guess.
  'repeated-key.json': '{"fields": {"nickname": {"type": "string"}}, "fields": {}}',
  'lone-surrogate.json': '{"fields": {"tags": [{"type": "\\ud800"}]}}',
  'garbage.mdb': 'not an LMDB file at all, but long enough to hold a header',
});
const dataDir = join(dir, 'data');
const cli = (...args: string[]) => runCli(args, { dataDir });

t.test('app create and app list on a fresh data dir', async (t) => {
  const created = await cli('app', 'create', '--name', 'Shop', '--schema', join(dir, 'schema.json'));
  t.equal(created.code, 0, created.stderr);
  const app = JSON.parse(created.stdout);
  t.match(app, { id: /^app_/, name: 'Shop', schema: { fields: { nickname: { type: 'string', user_writable: true } } } });
  const plain = await cli('app', 'create', '--name', 'Plain');
  t.equal(plain.code, 0, plain.stderr);
  const listed = await cli('app', 'list');
  t.equal(listed.code, 0, listed.stderr);
  t.same(
    JSON.parse(listed.stdout).map((a: { name: string }) => a.name),
    ['Shop', 'Plain'],
  );
});

t.test('bad calls fail with a clear message and change nothing', async (t) => {
  const cases: Array<[string[], number, RegExp]> = [
    [['app', 'create', '--name', 'X', '--schema', join(dir, 'bad-schema.json')], 1, /schema\.fields\.nickname\.type/],
    [['app', 'create', '--name', 'X', '--schema', join(dir, 'not-json.json')], 2, /not valid JSON/],
    [['app', 'create', '--name', 'X', '--schema', join(dir, 'absent.json')], 2, /Cannot read/],
    [['app', 'create', '--name', 'X', '--schema', join(dir, 'repeated-key.json')], 2, /repeated-key\.json is not valid JSON: an object names a key more than once/],
    [['app', 'create', '--name', 'X', '--schema', join(dir, 'lone-surrogate.json')], 2, /lone-surrogate\.json is not valid JSON: fields\.tags\[0\]\.type: has a lone surrogate/],
    [['app', 'create', '--name', '  '], 1, /name/],
    [['app', 'create'], 2, /needs --name/],
    [['app', 'create', '--name', 'X', '--colour', 'red'], 2, /--colour/],
    [['credential', 'create', '--app', 'app_nope'], 1, /application "app_nope" not found/],
    [['credential', 'revoke', '--app', 'app_nope'], 2, /needs --key/],
    [['backup'], 2, /takes FILE/],
    // Which copy counts would be a guess: `--key K1 --key K2` would revoke K2 alone.
    [['app', 'create', '--name', 'X', '--name', 'Y'], 2, /--name is given more than once/],
    [['credential', 'revoke', '--app', 'app_nope', '--key', 'key_a', '--key', 'key_b'], 2, /--key is given more than once/],
    [['keys', 'rotate', '--revoke', '--revoke'], 2, /--revoke is given more than once/],
    [['frobnicate'], 2, /Unknown command/],
  ];
  for (const [args, code, message] of cases) {
    const result = await cli(...args);
    t.equal(result.code, code, args.join(' '));
    t.match(result.stderr, message, args.join(' '));
    t.equal(result.stdout, '', 'nothing on stdout');
  }
  const listed = JSON.parse((await cli('app', 'list')).stdout);
  t.equal(listed.length, 2, 'no application was created');
  const help = await cli('help');
  t.equal(help.code, 0);
  t.match(help.stdout, /app create --name N/);

  const mistyped = join(dir, 'no-such-data');
  for (const args of [['app', 'list'], ['verify'], ['credential', 'list', '--app', 'app_x'], ['keys', 'rotate']]) {
    const result = await runCli(args, { dataDir: mistyped });
    t.equal(result.code, 1, `${args.join(' ')} on a data dir that is not there`);
    t.match(result.stderr, /holds no data \(check SVC_DATA_DIR\)/);
    t.notMatch(result.stderr, /\n\s+at /, 'a message, not a stack trace');
  }
  t.notOk(existsSync(mistyped), 'and none is made');
  const unwritable = await cli('backup', join(dir, 'no-such-dir', 'x.mdb'));
  t.equal(unwritable.code, 1);
  t.match(unwritable.stderr, /^error: /);
  t.notMatch(unwritable.stderr, /\n\s+at /);
});

t.test('credentials made and revoked by the CLI count at once in a running server', async (t) => {
  const server = await startServer(t, { dataDir, extraRoutes: platformProbe });
  const [shop] = JSON.parse((await cli('app', 'list')).stdout);
  const created = await cli('credential', 'create', '--app', shop.id);
  t.equal(created.code, 0, created.stderr);
  const credential = JSON.parse(created.stdout);
  t.match(credential, { key: /^key_/, secret: /^sec_/, app_id: shop.id });
  t.match(created.stderr, /cannot be shown again/);

  const use = () => server.request('GET', probePath(shop.id), { app: { id: shop.id, ...credential } });
  t.equal((await use()).status, 200, 'the running server accepts the new credential');

  const listed = await cli('credential', 'list', '--app', shop.id);
  t.equal(listed.code, 0);
  t.equal(JSON.parse(listed.stdout)[0].key, credential.key);
  t.notOk(listed.stdout.includes(credential.secret), 'the list shows the secret masked only');
  t.notOk((await cli('app', 'list')).stdout.includes(credential.secret));

  const revoked = await cli('credential', 'revoke', '--app', shop.id, '--key', credential.key);
  t.equal(revoked.code, 0, revoked.stderr);
  t.equal((await use()).status, 401, 'revoked in another process: refused on the very next request');
  const again = await cli('credential', 'revoke', '--app', shop.id, '--key', credential.key);
  t.equal(again.code, 1);
  t.match(again.stderr, /credential "key_\w+" not found/);
  const elsewhere = await cli('credential', 'revoke', '--app', 'app_01JZZZZZZZZZZZZZZZZZZZZZZZ', '--key', credential.key);
  t.equal(elsewhere.code, 1);
  t.match(elsewhere.stderr, /application "app_01JZZZZZZZZZZZZZZZZZZZZZZZ" not found/, 'an unknown application is named as such');
});

t.test('backup while a server runs, restore into an empty dir, and the credentials still work', async (t) => {
  const server = await startServer(t, { dataDir, extraRoutes: platformProbe });
  const [shop] = JSON.parse((await cli('app', 'list')).stdout);
  const credential = JSON.parse((await cli('credential', 'create', '--app', shop.id)).stdout);
  const file = join(dir, 'backup.mdb');
  // What a backup killed before its rename leaves, and one still being made by a live process.
  const gone = join(dir, `.backup-${spawnSync('true').pid}-k1ll3d`);
  const live = join(dir, `.backup-${process.pid}-st1llm4k1ng`);
  for (const staging of [gone, live]) {
    mkdirSync(staging);
    writeFileSync(join(staging, 'data.mdb'), 'partial copy');
  }
  const backedUp = await cli('backup', file);
  t.equal(backedUp.code, 0, backedUp.stderr);
  t.ok(existsSync(file));
  t.equal(statSync(file).mode & 0o777, 0o600, 'a backup is as private as the data it copies');
  t.same(
    readdirSync(dir).filter((name) => name.startsWith('.backup-')),
    [basename(live)],
    'no staging left behind: its own removed, one a killed backup left removed, a live one kept',
  );
  rmSync(live, { recursive: true });
  const overwrite = await cli('backup', file);
  t.equal(overwrite.code, 1, 'an existing backup file is kept');
  t.match(overwrite.stderr, /--force/);
  t.equal((await cli('backup', file, '--force')).code, 0);

  // Changes after the backup are not in it.
  await cli('app', 'create', '--name', 'After backup');
  await server.close();

  const restoredDir = join(dir, 'restored');
  const restored = await runCli(['restore', file], { dataDir: restoredDir });
  t.equal(restored.code, 0, restored.stderr);
  t.ok(existsSync(join(restoredDir, 'data.mdb')));
  t.same(
    readdirSync(restoredDir).filter((name) => name.startsWith('.')),
    [],
    'no staging left behind',
  );

  const names = JSON.parse((await runCli(['app', 'list'], { dataDir: restoredDir })).stdout).map((a: any) => a.name);
  t.same(names, ['Shop', 'Plain']);
  const onRestored = await startServer(t, { dataDir: restoredDir, extraRoutes: platformProbe });
  const res = await onRestored.request('GET', probePath(shop.id), { app: { id: shop.id, ...credential } });
  t.equal(res.status, 200, 'a credential made before the backup works on the restored data (the pepper came along)');
  await onRestored.close();

  const refused = await runCli(['restore', file], { dataDir });
  t.equal(refused.code, 1, 'a data dir with data is not overwritten');
  t.match(refused.stderr, /not empty; pass --force/);
  t.equal(JSON.parse((await cli('app', 'list')).stdout).length, 3, 'the refused restore changed nothing');

  const forced = await runCli(['restore', file, '--force'], { dataDir });
  t.equal(forced.code, 0, forced.stderr);
  t.equal(JSON.parse((await cli('app', 'list')).stdout).length, 2, '--force replaced the data with the backup');

  const garbage = await runCli(['restore', join(dir, 'garbage.mdb')], { dataDir: join(dir, 'other') });
  t.equal(garbage.code, 1);
  t.match(garbage.stderr, /not a whole LMDB backup file/);
  t.notOk(existsSync(join(dir, 'other', 'data.mdb')));
  const cut = join(dir, 'cut.mdb');
  writeFileSync(cut, readFileSync(file).subarray(0, Math.floor(statSync(file).size / 2)));
  const truncated = await runCli(['restore', cut], { dataDir: join(dir, 'other') });
  t.equal(truncated.code, 1, 'a backup cut short is refused, not mapped (LMDB would die of SIGBUS)');
  t.match(truncated.stderr, /not a whole LMDB backup file \(cut short/);
  t.notOk(existsSync(join(dir, 'other', 'data.mdb')));
  t.notOk(existsSync(join(dir, 'other')), 'nothing was made');
  const absent = await runCli(['restore', join(dir, 'absent.mdb')], { dataDir: join(dir, 'other') });
  t.equal(absent.code, 1);
  const nothing = await runCli(['backup', join(dir, 'empty.mdb')], { dataDir: join(dir, 'empty') });
  t.equal(nothing.code, 1);
  t.match(nothing.stderr, /holds no data/);
});

t.test('a data dir that is a file, or under one, is named as such and nothing is made', async (t) => {
  const file = join(dir, 'a-plain-file');
  writeFileSync(file, 'not a directory');
  for (const [dataDir, message] of [
    [file, `SVC_DATA_DIR: ${file} is a file, not a directory`],
    [join(file, 'data'), `SVC_DATA_DIR: ${join(file, 'data')} is under ${file}, a file, not a directory`],
  ]) {
    for (const args of [['app', 'list'], ['app', 'create', '--name', 'X'], ['verify'], ['backup', join(dir, 'from-a-file.mdb')]]) {
      const result = await runCli(args, { dataDir });
      t.equal(result.code, 1, `${args.join(' ')} on ${dataDir}`);
      t.equal(result.stderr, `error: Invalid configuration:\n  ${message}\n`);
    }
    const start = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' } });
    t.equal(start.code, 1, `a server start on ${dataDir}`);
    t.equal(start.stderr, `Invalid configuration:\n  ${message}\n`);
  }
  t.equal(readFileSync(file, 'utf8'), 'not a directory', 'the file is untouched');
  t.notOk(existsSync(join(dir, 'from-a-file.mdb')));
});

t.test('backup onto a directory says so, --force or not, and leaves it alone', async (t) => {
  const source = join(dir, 'backup-to-dir-data');
  t.equal((await runCli(['app', 'create', '--name', 'X'], { dataDir: source })).code, 0);
  const target = join(dir, 'a-directory');
  mkdirSync(target);
  for (const force of [[], ['--force']]) {
    const result = await runCli(['backup', target, ...force], { dataDir: source });
    t.equal(result.code, 1, ['backup', ...force].join(' '));
    t.equal(result.stderr, `error: ${target} is a directory; name a file to back up to\n`);
  }
  t.same(readdirSync(target), [], 'the directory is left empty');
  t.same(readdirSync(dir).filter((name) => name.startsWith('.backup-')), [], 'no staging left behind');
});

t.test('a backup into a folder that does not exist says so, not a bare ENOENT', async (t) => {
  const source = join(dir, 'missing-folder-data');
  t.equal((await runCli(['app', 'create', '--name', 'X'], { dataDir: source })).code, 0);
  const folder = join(dir, 'no-such-folder');
  const result = await runCli(['backup', join(folder, 'x.mdb')], { dataDir: source });
  t.equal(result.code, 1);
  t.equal(result.stderr, `error: ${folder} is no directory to back up into\n`);
  t.notOk(existsSync(folder), 'nothing is made');
});

t.test('an empty FILE is a usage error, not the current directory', async (t) => {
  const source = join(dir, 'empty-argument-data');
  t.equal((await runCli(['app', 'create', '--name', 'X'], { dataDir: source })).code, 0);
  for (const [command, dataDir] of [['backup', source], ['restore', join(dir, 'empty-argument-restore')]]) {
    const result = await runCli([command, ''], { dataDir });
    t.equal(result.code, 2, command);
    t.equal(result.stderr, `error: ${command}: FILE is empty\nusage: npm run svc -- ${command} FILE [--force]\n`);
  }
  t.notOk(existsSync(join(dir, 'empty-argument-restore')), 'nothing made');
});

t.test('restore of a FILE that is absent or a directory says which, and makes nothing', async (t) => {
  const target = join(dir, 'restore-nothing');
  const absent = join(dir, 'no-such-backup.mdb');
  const directory = join(dir, 'a-backup-directory');
  mkdirSync(directory);
  for (const [file, message] of [
    [absent, `${absent} does not exist`],
    [directory, `${directory} is a directory, not a backup file`],
  ]) {
    const result = await runCli(['restore', file], { dataDir: target });
    t.equal(result.code, 1, file);
    t.equal(result.stderr, `error: ${message}\n`);
  }
  t.notOk(existsSync(target), 'no data dir made');
});

t.test('restore of an LMDB file that is no backup of this service makes no data dir, nor its parents', async (t) => {
  const foreign = join(dir, 'foreign');
  const store = openStore(foreign);
  await store.commit(() => store.db<string>('anything').put('key', 'value'));
  await store.close();
  const target = join(dir, 'restore-parent', 'nested', 'data');
  const result = await runCli(['restore', join(foreign, 'data.mdb')], { dataDir: target });
  t.equal(result.code, 1);
  t.match(result.stderr, /is not a backup of this service \(no data format version\)/);
  t.notOk(existsSync(join(dir, 'restore-parent')), 'no dir made');
  mkdirSync(join(dir, 'kept'));
  const into = await runCli(['restore', join(foreign, 'data.mdb')], { dataDir: join(dir, 'kept', 'data') });
  t.equal(into.code, 1);
  t.same(readdirSync(join(dir, 'kept')), [], 'a dir that was there stays; the one made under it goes');
});
