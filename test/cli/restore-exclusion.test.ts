import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compiledService } from '../helpers/build.js';
import { runCli, runEntry } from '../helpers/child.js';
import { heldCli, pausedChild, PAUSE } from '../helpers/held-cli.js';

/** Names of the applications a data dir holds, read by the CLI. */
const appNames = async (dataDir: string) =>
  JSON.parse((await runCli(['app', 'list'], { dataDir })).stdout).map((app: { name: string }) => app.name);

/** A data dir holding application `name`, and a backup file of one holding 'Backed up'. */
async function dataDirAndBackup(dir: string, name: string) {
  const backedUp = join(dir, 'backed-up');
  await runCli(['app', 'create', '--name', 'Backed up'], { dataDir: backedUp });
  const backup = join(dir, 'backup.mdb');
  await runCli(['backup', backup], { dataDir: backedUp });
  const dataDir = join(dir, 'data');
  await runCli(['app', 'create', '--name', name], { dataDir });
  return { dataDir, backup };
}

/** A restore held once its copy is made, before it renames it into place. */
const heldRestore = (t: { teardown(fn: () => unknown): void }, dir: string, dataDir: string, backup: string) =>
  heldCli(t, dir, dataDir, 'copyFile', ['restore', backup, '--force']);

t.test('a command that would write is refused while a restore runs: its write would be lost to the restored data file', async (t) => {
  const dir = t.testdir();
  const { dataDir, backup } = await dataDirAndBackup(dir, 'Replaced');
  const restore = await heldRestore(t, dir, dataDir, backup);

  for (const args of [['app', 'create', '--name', 'Lost'], ['keys', 'rotate'], ['app', 'list']]) {
    const refused = await runCli(args, { dataDir });
    t.equal(refused.code, 1, args.join(' '));
    t.match(refused.stderr, new RegExp(`^error: ${dataDir} is being restored by process ${restore.pid}; try again once it is done$`, 'm'));
    t.equal(refused.stdout, '');
  }
  const start = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' } });
  t.equal(start.code, 1, 'a server start is refused too');
  t.match(start.stderr, /is being restored by process/);

  const restored = await restore.resume();
  t.equal(restored.code, 0, restored.output);
  t.same(await appNames(dataDir), ['Backed up'], 'the data is the backup\'s');
  t.same(readdirSync(dataDir).filter((name) => name.startsWith('.')), [], 'no mark is left');
  t.equal((await runCli(['app', 'create', '--name', 'After'], { dataDir })).code, 0, 'once restored, commands write again');
});

t.test('a restore is refused while a command writes: the write would be lost to the restored data file', async (t) => {
  const dir = t.testdir();
  const { dataDir, backup } = await dataDirAndBackup(dir, 'Kept');
  const build = await compiledService();
  // A command between opening the data dir and writing to it.
  const writer = [
    `const { withServices } = await import(${JSON.stringify(join(build, 'src', 'cli', 'services.js'))});`,
    `const { loadConfig } = await import(${JSON.stringify(join(build, 'src', 'config.js'))});`,
    `await withServices(loadConfig(process.env), async (deps) => { ${PAUSE} await deps.apps.create('Written'); });`,
  ].join('\n');
  const writing = await pausedChild(t, ['--input-type=module', '-e', writer], dataDir);

  const refused = await runCli(['restore', backup, '--force'], { dataDir });
  t.equal(refused.code, 1);
  t.match(refused.stderr, new RegExp(`^error: ${dataDir} is being written by process ${writing.pid} \\(a CLI command\\); try again once it is done$`, 'm'));

  const written = await writing.resume();
  t.equal(written.code, 0, written.output);
  t.same(await appNames(dataDir), ['Kept', 'Written'], 'the refused restore changed nothing, and the write is kept');
  const again = await runCli(['restore', backup, '--force'], { dataDir });
  t.equal(again.code, 0, `once the command is done, the restore runs: ${again.stderr}`);
  t.same(await appNames(dataDir), ['Backed up']);
});

t.test('verify is refused while a restore runs, and a restore while verify runs: the lock file it makes would be the restored data file\'s', async (t) => {
  const dir = t.testdir();
  const { dataDir, backup } = await dataDirAndBackup(dir, 'Replaced');
  const restore = await heldRestore(t, dir, dataDir, backup);
  const refused = await runCli(['verify'], { dataDir });
  t.equal(refused.code, 1, refused.stderr);
  t.match(refused.stderr, new RegExp(`^error: ${dataDir} is being restored by process ${restore.pid}; try again once it is done$`, 'm'));
  t.equal(refused.stdout, '', 'no report');
  t.equal((await restore.resume()).code, 0);

  const build = await compiledService();
  // `verify` between opening the data dir and reading it.
  const verifying = [
    `const { withServices } = await import(${JSON.stringify(join(build, 'src', 'cli', 'services.js'))});`,
    `const { loadConfig } = await import(${JSON.stringify(join(build, 'src', 'config.js'))});`,
    `await withServices(loadConfig(process.env), async () => { ${PAUSE} }, { readOnly: true });`,
  ].join('\n');
  const reading = await pausedChild(t, ['--input-type=module', '-e', verifying], dataDir);
  const restoreRefused = await runCli(['restore', backup, '--force'], { dataDir });
  t.equal(restoreRefused.code, 1, restoreRefused.stderr);
  t.match(restoreRefused.stderr, new RegExp(`^error: ${dataDir} is being written by process ${reading.pid} \\(a CLI command\\); try again once it is done$`, 'm'));
  t.equal((await reading.resume()).code, 0);
  const verified = await runCli(['verify'], { dataDir });
  t.equal(verified.code, 0, `once the restore is done, verify runs: ${verified.stderr}`);
  t.same(readdirSync(dataDir).filter((name) => name.startsWith('.')), [], 'no mark is left');
});

t.test('a backup is refused while a restore runs, and a restore while a backup runs: each opens the data dir the other replaces', async (t) => {
  const dir = t.testdir();
  const { dataDir, backup } = await dataDirAndBackup(dir, 'Replaced');
  const restore = await heldRestore(t, dir, dataDir, backup);
  const during = join(dir, 'during-restore.mdb');
  const refused = await runCli(['backup', during], { dataDir });
  t.equal(refused.code, 1, refused.stderr);
  t.match(refused.stderr, new RegExp(`^error: ${dataDir} is being restored by process ${restore.pid}; try again once it is done$`, 'm'));
  t.notOk(existsSync(during), 'no backup is written');
  t.equal((await restore.resume()).code, 0);

  // A backup held once its staging directory is made, before it opens the data dir.
  const backingUp = await heldCli(t, dir, dataDir, 'mkdtemp', ['backup', join(dir, 'second.mdb')]);
  const restoreRefused = await runCli(['restore', backup, '--force'], { dataDir });
  t.equal(restoreRefused.code, 1, restoreRefused.stderr);
  t.match(restoreRefused.stderr, new RegExp(`^error: ${dataDir} is being written by process ${backingUp.pid} \\(a CLI command\\); try again once it is done$`, 'm'));
  const backedUp = await backingUp.resume();
  t.equal(backedUp.code, 0, backedUp.output);
  t.same(readdirSync(dataDir).filter((name) => name.startsWith('.')), [], 'no mark is left');
});
