import t, { type Test } from 'tap';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../helpers/server.js';
import { runCli, startChildServer } from '../helpers/child.js';
import { dataDirDigest } from '../helpers/data-files.js';
import { asFormat5Record } from '../helpers/view-records.js';
import { FORMAT_VERSION } from '../../src/storage/migrations.js';
import { allInvariants } from '../../src/verify/all.js';
import type { Deps } from '../../src/deps.js';

/** A data dir a server made and served a user from, then `damage` in one commit, the server closed. */
async function dataDirWith(t: Test, damage: (deps: Deps) => void): Promise<string> {
  const dataDir = t.testdir();
  const server = await startServer(t, { dataDir });
  const put = await server.request('PUT', `/applications/${server.app.id}/users/u1/data`, { app: server.app, body: { data: { email: 'u1@example.com' } } });
  t.equal(put.status, 200);
  await server.deps.store.commit(() => damage(server.deps));
  await server.close();
  return dataDir;
}

/** `svc verify` on `dataDir`: its exit code and report, once checked that not a byte of the data dir changed. */
async function verifyChangingNothing(t: Test, dataDir: string): Promise<{ code: number | null; checked: string[]; problems: string[] }> {
  const before = dataDirDigest(dataDir);
  const result = await runCli(['verify'], { dataDir });
  t.equal(dataDirDigest(dataDir), before, 'verify changed nothing in the data dir');
  t.notMatch(result.stderr, /\n\s+at /, 'a report, not a stack trace');
  const { checked, problems } = JSON.parse(result.stdout || '{}');
  return { code: result.code, checked, problems };
}

/** Verify reports `problem` as the one problem of `dataDir`, checks nothing else, and changes nothing. */
async function reportedAlone(t: Test, dataDir: string, problem: RegExp): Promise<void> {
  const report = await verifyChangingNothing(t, dataDir);
  t.equal(report.code, 1);
  t.same(report.checked, [], 'nothing else is checked');
  t.match(report.problems, [problem]);
  t.equal(report.problems.length, 1, report.problems.join('\n'));
}

/** The user records and format version as data format 5 kept them. */
function asFormat5(deps: Deps): void {
  const { records } = deps.profiles;
  for (const key of [...records.getKeys({})]) records.put(key, asFormat5Record(records.getBinary(key)!));
  deps.store.db('meta').put('format_version', 5);
}

const everyInvariant = allInvariants.map((invariant) => invariant.name);

const removeAll = (deps: Deps, name: string) => {
  const db = deps.store.db(name);
  for (const key of [...db.getKeys({})]) db.remove(key);
};

t.test('a data dir without LMDB\'s lock file (as a restore leaves it): the one verify needs is its owner\'s alone', async (t) => {
  const dataDir = await dataDirWith(t, () => {});
  const lockFile = join(dataDir, 'lock.mdb');
  rmSync(lockFile);
  // A common umask: what LMDB would make the file with, unless made first.
  const umask = process.umask(0o022);
  t.teardown(() => process.umask(umask));
  t.same(await verifyChangingNothing(t, dataDir), { code: 0, checked: everyInvariant, problems: [] });
  t.equal(statSync(lockFile).mode & 0o777, 0o600, 'not readable by other accounts, as every file of the data dir');
});

t.test('no signing key: reported, and none is made', async (t) => {
  const dataDir = await dataDirWith(t, (deps) => removeAll(deps, 'signing_keys'));
  const { code, problems } = await verifyChangingNothing(t, dataDir);
  t.equal(code, 1);
  t.same(problems, ['signing keys: there is no signing key']);
});

t.test('a signing key that does not parse: reported, not a crash', async (t) => {
  const dataDir = await dataDirWith(t, (deps) => {
    const keys = deps.store.db('signing_keys');
    const [kid] = [...keys.getKeys({})];
    const stored = keys.get(kid);
    keys.put(kid, { ...stored, privateJwk: { ...stored.privateJwk, d: 'not-a-key' } });
  });
  const { code, problems } = await verifyChangingNothing(t, dataDir);
  t.equal(code, 1);
  t.match(problems, [/^signing keys: key sig-\d+ has a private half that does not parse$/]);
  t.equal(problems.length, 1, problems.join('\n'));
});

t.test('an older format: reported alone, left as it is; once a server start has migrated it, it verifies', async (t) => {
  const dataDir = await dataDirWith(t, asFormat5);
  await reportedAlone(t, dataDir, new RegExp(`^data dir: Data dir .* has format 5, older than this build's \\(${FORMAT_VERSION}\\): a server start migrates it$`));
  await (await startServer(t, { dataDir })).close();
  t.same(await verifyChangingNothing(t, dataDir), { code: 0, checked: everyInvariant, problems: [] });
});

t.test('a data dir a server start would refuse, or give a pepper: reported alone, left as it is', async (t) => {
  const cases: Array<{ name: string; damage: (deps: Deps) => void; problem: RegExp }> = [
    {
      name: 'a newer format',
      damage: (deps) => deps.store.db('meta').put('format_version', FORMAT_VERSION + 1),
      problem: /^data dir: Data dir .* has format \d+, newer than this build understands/,
    },
    {
      name: 'applications but no pepper',
      damage: (deps) => deps.store.db('meta').remove('secret_pepper'),
      problem: /^data dir: .* holds applications but no secret pepper: restore it from a backup$/,
    },
    {
      name: 'no pepper and no application',
      damage(deps) {
        deps.store.db('meta').remove('secret_pepper');
        removeAll(deps, 'apps');
      },
      problem: /^data dir: .* has no secret pepper yet: a server start makes one$/,
    },
  ];
  for (const { name, damage, problem } of cases) {
    await t.test(name, async (t) => reportedAlone(t, await dataDirWith(t, damage), problem));
  }
});

t.test('a sound data dir: exit 0 and not a byte changed, also made by the CLI alone, also beside a running server', async (t) => {
  const dataDir = t.testdir();
  const created = await runCli(['app', 'create', '--name', 'Shop'], { dataDir });
  t.equal(created.code, 0, created.stderr);
  // The CLI never opened the databases only the server's routes use: verify reads them as empty.
  t.same(await verifyChangingNothing(t, dataDir), { code: 0, checked: everyInvariant, problems: [] });

  // The server claims the data dir (server.pid); verify reads beside it, as every CLI command may.
  const server = await startChildServer(t, { dataDir });
  const beside = await runCli(['verify'], { dataDir });
  t.equal(beside.code, 0, beside.stderr);
  t.same(JSON.parse(beside.stdout).problems, []);
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });

  t.same(await verifyChangingNothing(t, dataDir), { code: 0, checked: everyInvariant, problems: [] });
});
