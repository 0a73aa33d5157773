import t, { type Test } from 'tap';
import fs, { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { spawn } from 'node:child_process';
import { compiledService } from '../helpers/build.js';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { runCli, runEntry, startChildServer } from '../helpers/child.js';
import { ENDS_WITH_TEST } from '../helpers/ends-with-test.js';
import { claimDataDir, identityOf, servingProcess } from '../../src/storage/server-claim.js';
import { openStore } from '../../src/storage/store.js';
import { backupDataDir, restoreDataDir } from '../../src/storage/backup.js';
import { FORMAT_VERSION } from '../../src/storage/migrations.js';

/** The PID a data dir's claim names (its first line). */
const claimedPid = (dataDir: string) => readFileSync(join(dataDir, 'server.pid'), 'utf8').split('\n')[0];

t.test('one server per data dir: a second is refused, a killed one\'s claim is taken over, a stopped one leaves none', async (t) => {
  const dir = t.testdir();
  const dataDir = join(dir, 'data');
  const first = await startChildServer(t, { dataDir });
  t.ok(existsSync(join(dataDir, 'server.pid')));

  const second = await runEntry('main', [], { dataDir, env: { HOST: '127.0.0.1', PORT: '0' } });
  t.equal(second.code, 1, 'a second server on the same data dir does not start');
  t.match(second.stderr, new RegExp(`is served by process ${first.child.pid}`));
  t.notMatch(second.stderr, /\n\s+at /, 'a message, not a stack trace');
  t.equal((await fetch(`${first.url}/health`)).status, 200, 'the first one serves on');

  const backup = join(dir, 'backup.mdb');
  t.equal((await runCli(['backup', backup], { dataDir })).code, 0, 'a backup beside a running server is fine');
  const alias = join(dir, 'alias');
  symlinkSync(dataDir, alias);
  for (const target of [join(dataDir, 'data.mdb'), join(dataDir, 'server.pid'), join(alias, 'data.mdb'), join(dataDir, '..', 'data', 'new.mdb')]) {
    const ontoLive = await runCli(['backup', target, '--force'], { dataDir });
    t.equal(ontoLive.code, 1, `a backup is never written inside the data dir: ${target}`);
  }
  t.equal(claimedPid(dataDir), String(first.child.pid), 'the claim is untouched');
  const restore = await runCli(['restore', backup, '--force'], { dataDir });
  t.equal(restore.code, 1, 'a restore under a running server is refused, --force or not');
  t.match(restore.stderr, /is served by process/);
  t.equal((await fetch(`${first.url}/health`)).status, 200);

  first.child.kill('SIGKILL');
  await first.exited;
  t.ok(existsSync(join(dataDir, 'server.pid')), 'a killed server leaves its claim');
  const third = await startChildServer(t, { dataDir });
  t.equal((await fetch(`${third.url}/health`)).status, 200, 'which the next start takes over');
  third.child.kill('SIGTERM');
  t.same(await third.exited, { code: 0, signal: null });
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'a clean stop releases the claim');
});

/** A port free a moment ago. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

t.test('one server per port: a second on the port in use does not start, whatever its data dir', async (t) => {
  const dir = t.testdir();
  const port = String(await freePort());
  const first = await startChildServer(t, { dataDir: join(dir, 'a'), env: { PORT: port } });
  const second = await runEntry('main', [], { dataDir: join(dir, 'b'), env: { HOST: '127.0.0.1', PORT: port } });
  t.equal(second.code, 1, 'refused rather than sharing the port');
  t.notOk(existsSync(join(dir, 'b', 'server.pid')), 'a start that failed leaves no claim behind');
  t.match(second.stderr, /^Cannot start: Cannot listen on HOST=127\.0\.0\.1 PORT=\d+ \(is the port in use, or HOST not an address of this machine\?\)\n$/);
  t.equal(second.stdout, '', 'the failed start showed no secret');
  for (let i = 0; i < 10; i++) t.equal((await fetch(`${first.url}/health`)).status, 200);
  const elsewhere = await startChildServer(t, { dataDir: join(dir, 'b') });
  t.ok(elsewhere.defaultApp, 'the first start that listens is the one that makes and shows the default application');
});

t.test('a claim naming the starting process itself is a leftover: a container\'s PID 1 restarts on its data dir', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const main = join(await compiledService(), 'src', 'main.js');
  // The shell writes its own PID as the claim, then becomes the server under that same PID.
  const child = spawn('/bin/sh', ['-c', 'mkdir -p "$0" && echo $$ > "$0/server.pid" && exec "$@"', dataDir, process.execPath, ...ENDS_WITH_TEST, main], {
    env: { ...process.env, NODE_OPTIONS: '', HOST: '127.0.0.1', PORT: '0', SVC_PUBLIC_URL: 'http://svc.test', SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'info' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const outcome = await new Promise<string>((resolve) => {
    child.stdout.on('data', () => /"msg":"listening"/.test(output) && resolve('listening'));
    child.once('exit', (code) => resolve(`exited ${code}: ${output}`));
  });
  t.equal(outcome, 'listening');
  t.equal(claimedPid(dataDir), String(child.pid), 'and it holds the claim');
});

t.test('a claim names its process by more than a PID: one that another process has since taken is a leftover', async (t) => {
  // A live process that is not the server: its PID stands for one a reboot, or PIDs wrapping around, handed on.
  const other = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => other.kill('SIGKILL'));
  await new Promise((resolve) => other.once('spawn', resolve));
  const pid = other.pid!;
  const identity = identityOf(pid);
  t.ok(identity, 'this machine has /proc');
  const [, boot, startTicks] = /^boot=(\S+) start=(\d+)$/.exec(identity!)!;
  const claimWith = (content: string) => {
    const dataDir = t.testdir();
    writeFileSync(join(dataDir, 'server.pid'), content);
    return dataDir;
  };

  const same = claimWith(`${pid}\n${identity}\n`);
  t.equal(servingProcess(same), pid, 'the process the claim names');
  t.throws(() => claimDataDir(same), new RegExp(`is served by process ${pid}`), 'is never taken over');
  t.equal(claimedPid(same), String(pid));

  const leftovers = {
    'started at another time': `${pid}\nboot=${boot} start=${Number(startTicks) + 1}\n`,
    'started in another boot': `${pid}\nboot=00000000-0000-0000-0000-000000000000 start=${startTicks}\n`,
  };
  for (const [what, content] of Object.entries(leftovers)) {
    const dataDir = claimWith(content);
    t.equal(servingProcess(dataDir), undefined, `a live PID whose process ${what} serves nothing`);
    const release = claimDataDir(dataDir);
    const claim = readFileSync(join(dataDir, 'server.pid'), 'utf8');
    t.same(claim.split('\n'), [String(process.pid), identityOf(process.pid), ''], 'the claim is taken over');
    t.same(claim.split(/\s+/).filter((word) => /^\d+$/.test(word)), [String(process.pid)], "the PID is its one bare number: `kill $(cat server.pid)` signals no other process");
    release();
    t.notOk(existsSync(join(dataDir, 'server.pid')), 'and released');
  }

  const bare = claimWith(String(pid));
  t.equal(servingProcess(bare), pid, 'a claim of an older build (a PID alone) is trusted by its PID');
});

t.test('a claim is never seen half-made: one read while its server makes it names that server', async (t) => {
  const dataDir = t.testdir();
  const claim = join(dataDir, 'server.pid');
  // What a start beside it finds, each time the claiming process reads its own identity from /proc.
  const seen: Array<number | 'no claim' | 'nothing served'> = [];
  const { readFileSync: read } = fs;
  let looking = false;
  fs.readFileSync = ((path: string, ...rest: unknown[]) => {
    if (path === '/proc/sys/kernel/random/boot_id' && !looking) {
      looking = true;
      seen.push(existsSync(claim) ? (servingProcess(dataDir) ?? 'nothing served') : 'no claim');
      looking = false;
    }
    return (read as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readFileSync;
  syncBuiltinESMExports();
  t.teardown(() => {
    fs.readFileSync = read;
    syncBuiltinESMExports();
  });

  const release = claimDataDir(dataDir);
  t.ok(seen.length > 0, 'the claim was looked at while it was made');
  t.notOk(seen.includes('nothing served'), `a start beside it would have taken it over: ${seen.join(', ')}`);
  t.equal(servingProcess(dataDir), process.pid);
  release();
  t.same(readdirSync(dataDir), [], 'nothing is left once released');
});

t.test('a restore claims the data dir while it copies, as a server does: a server started meanwhile is refused', async (t) => {
  const source = t.testdir({ from: {}, to: {} });
  const store = openStore(join(source, 'from'));
  // What a served data dir holds at least: its format.
  await store.commit(() => store.db('meta').put('format_version', FORMAT_VERSION));
  await store.close();
  const backup = join(source, 'backup.mdb');
  await backupDataDir(join(source, 'from'), backup);

  const dataDir = join(source, 'to', 'restored');
  const servedWhileCopying: Array<number | undefined> = [];
  const { copyFile } = fs.promises;
  fs.promises.copyFile = ((...args: Parameters<typeof copyFile>) => {
    servedWhileCopying.push(servingProcess(dataDir));
    return copyFile(...args);
  }) as typeof copyFile;
  syncBuiltinESMExports();
  t.teardown(() => {
    fs.promises.copyFile = copyFile;
    syncBuiltinESMExports();
  });

  await restoreDataDir(dataDir, backup);
  t.same(servedWhileCopying, [process.pid], 'claimed by the restore while it copies');
  t.notOk(existsSync(join(dataDir, 'server.pid')), 'and released once done');
  t.equal(statSync(dataDir).mode & 0o777, 0o700, 'a data dir it makes is its owner\'s alone');
});

t.test('a claim removes the working copies that processes killed while claiming or restoring left, and no live one', async (t) => {
  const goneId = await goneProcessId();
  const running = await idleProcess(t);
  const dataDir = t.testdir({
    [`.restore-${goneId}`]: { 'data.mdb': 'a copy as large as the data' },
    [`.server.pid.${goneId}`]: `${goneId}\n`,
    [`.takeover-${goneId}`]: `${goneId}\n`,
    [`.restore-${running.pid}`]: { 'data.mdb': 'a restore still copying' },
    [`.server.pid.${running.pid}`]: `${running.pid}\n`,
    [`.takeover-${running.pid}`]: `${running.pid}\n`,
    '.gitkeep': '',
  });
  const release = claimDataDir(dataDir);
  t.same(readdirSync(dataDir).sort(), ['.gitkeep', `.restore-${running.pid}`, `.server.pid.${running.pid}`, `.takeover-${running.pid}`, 'server.pid'].sort());
  release();
});

t.test('a leftover claim is taken over by one process at a time: a start waits its turn, and gives up on one that never ends', async (t) => {
  const running = await idleProcess(t);
  const goneId = await goneProcessId();
  const leftover = `${goneId}\n`;

  // A process stopped (or hung) while it takes over the claim: it would be its own to remove.
  const stuck = t.testdir({ 'server.pid': leftover, [`.takeover-${running.pid}`]: `${running.pid}\n${identityOf(running.pid!)}\n` });
  t.throws(() => claimDataDir(stuck), new RegExp(`^${stuck} is being claimed by process ${running.pid} too; try again$`));
  t.equal(readFileSync(join(stuck, 'server.pid'), 'utf8'), leftover, 'the leftover is left to it');
  t.same(readdirSync(stuck).sort(), [`.takeover-${running.pid}`, 'server.pid'], 'and nothing of this start');

  // One killed while it took it over, or whose PID another process has taken since, is no longer taking it over.
  const killed = t.testdir({ 'server.pid': leftover, [`.takeover-${goneId}`]: leftover, [`.takeover-${running.pid}`]: `${running.pid}\nboot=0 start=0\n` });
  const release = claimDataDir(killed);
  t.equal(claimedPid(killed), String(process.pid), 'the leftover is taken over');
  t.same(readdirSync(killed).sort(), [`.takeover-${running.pid}`, 'server.pid'], 'and the turn of the killed one removed');
  release();
});

t.test('a restore killed while it copies leaves nothing the next restore trips over: it restores without --force', async (t) => {
  const dir = t.testdir();
  const served = join(dir, 'served');
  t.equal((await runCli(['app', 'create', '--name', 'Shop'], { dataDir: served })).code, 0);
  const backup = join(dir, 'backup.mdb');
  t.equal((await runCli(['backup', backup], { dataDir: served })).code, 0);

  // A restore into an absent data dir, killed once its copy is made, before the rename.
  const dataDir = join(dir, 'restored');
  const backupModule = join(await compiledService(), 'src', 'storage', 'backup.js');
  const killedMidway = [
    "import fs from 'node:fs';",
    "import { syncBuiltinESMExports } from 'node:module';",
    'const { copyFile } = fs.promises;',
    "fs.promises.copyFile = async (...args) => { await copyFile(...args); process.kill(process.pid, 'SIGKILL'); };",
    'syncBuiltinESMExports();',
    `const { restoreDataDir } = await import(${JSON.stringify(backupModule)});`,
    `await restoreDataDir(${JSON.stringify(dataDir)}, ${JSON.stringify(backup)});`,
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', killedMidway], { stdio: 'ignore' });
  const signal = await new Promise((resolve) => child.once('exit', (_code, exitSignal) => resolve(exitSignal)));
  t.equal(signal, 'SIGKILL');
  t.notOk(existsSync(join(dataDir, 'data.mdb')), 'the killed restore left no data');
  t.ok(existsSync(join(dataDir, 'server.pid')), 'but its claim');

  const again = await runCli(['restore', backup], { dataDir });
  t.equal(again.code, 0, again.stderr);
  t.same(readdirSync(dataDir), ['data.mdb'], 'nothing of the killed restore is left');
  const listed = await runCli(['app', 'list'], { dataDir });
  t.same(JSON.parse(listed.stdout).map((app: { name: string }) => app.name), ['Shop']);
});

/** The PID of a process that has ended (a killed server's, as a leftover claim names it). */
async function goneProcessId(): Promise<number> {
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => gone.once('exit', resolve));
  return gone.pid!;
}

/** A live process that does nothing, ended with the test (or with this test process). */
async function idleProcess(t: Test) {
  const running = spawn(process.execPath, [...ENDS_WITH_TEST, '-e', 'setInterval(() => {}, 1000)'], { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['pipe', 'ignore', 'ignore'] });
  t.teardown(() => running.kill('SIGKILL'));
  await new Promise((resolve) => running.once('spawn', resolve));
  return running;
}

/** Blocks this thread until `done` holds (another process's doing), for at most a minute. */
function blockUntil(done: () => boolean, what: string): void {
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
}

/**
 * A process that claims `dataDir` once `go` exists, then holds the claim; it logs to `log` what it
 * links (its turn to take over a leftover claim, its claim) and why it was refused.
 */
async function rivalClaimant(t: Test, dataDir: string, go: string, log: string) {
  const module = join(await compiledService(), 'src', 'storage', 'server-claim.js');
  const rival = [
    "import fs from 'node:fs';",
    "import { basename } from 'node:path';",
    "import { syncBuiltinESMExports } from 'node:module';",
    'const { linkSync } = fs;',
    `fs.linkSync = (from, to) => { linkSync(from, to); fs.appendFileSync(${JSON.stringify(log)}, basename(to) + '\\n'); };`,
    'syncBuiltinESMExports();',
    `const { claimDataDir } = await import(${JSON.stringify(module)});`,
    `while (!fs.existsSync(${JSON.stringify(go)})) await new Promise((resolve) => setTimeout(resolve, 5));`,
    `try { claimDataDir(${JSON.stringify(dataDir)}); console.log('claimed'); setInterval(() => {}, 60_000); }`,
    `catch (error) { fs.appendFileSync(${JSON.stringify(log)}, 'refused\\n'); console.log(error.message); process.exitCode = 1; }`,
  ].join('\n');
  const child = spawn(process.execPath, [...ENDS_WITH_TEST, '--input-type=module', '-e', rival], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const outcome = new Promise<string>((resolve) => {
    child.stdout.on('data', () => output.includes('\n') && resolve(output.split('\n')[0]));
    child.once('exit', (code) => resolve(`exited ${code}: ${output}`));
  });
  return { pid: child.pid!, outcome };
}

for (const rivals of [1, 2]) {
  t.test(`${rivals + 1} starts on a leftover claim at once: one takes it over, the others are refused naming it, whatever they do meanwhile`, async (t) => {
    const dir = t.testdir({ data: {} });
    const dataDir = join(dir, 'data');
    const claim = join(dataDir, 'server.pid');
    writeFileSync(claim, `${await goneProcessId()}\n`);
    const go = join(dir, 'go');
    const logs = Array.from({ length: rivals }, (_, i) => join(dir, `rival-${i}.log`));
    const others = await Promise.all(logs.map((log) => rivalClaimant(t, dataDir, go, log)));

    // This process judges the claim a leftover; just before it removes it, the others make their
    // whole claims, or get as far as they may while it is removing it.
    const { unlinkSync } = fs;
    let raced = false;
    fs.unlinkSync = ((path: string) => {
      if (path === claim && !raced) {
        raced = true;
        writeFileSync(go, '');
        blockUntil(() => logs.every((log) => existsSync(log) && readFileSync(log, 'utf8') !== ''), 'the others to claim or take their turn');
      }
      unlinkSync(path);
    }) as typeof fs.unlinkSync;
    syncBuiltinESMExports();
    t.teardown(() => {
      fs.unlinkSync = unlinkSync;
      syncBuiltinESMExports();
    });

    let release: (() => void) | undefined;
    let refused = '';
    try {
      release = claimDataDir(dataDir);
    } catch (error) {
      refused = (error as Error).message;
    }
    t.ok(raced, 'the others ran while this process removed the leftover');
    const outcomes = await Promise.all(others.map((other) => other.outcome));
    const holders = [...(release ? [process.pid] : []), ...others.filter((_, i) => outcomes[i] === 'claimed').map((other) => other.pid)];
    t.same(holders.length, 1, `one holds the claim: ${JSON.stringify({ refused, outcomes })}`);
    t.equal(claimedPid(dataDir), String(holders[0]), 'the claim names it');
    const refusals = [refused, ...outcomes].filter((outcome) => outcome !== '' && outcome !== 'claimed');
    t.equal(refusals.length, rivals, 'the others were refused');
    // Or, having waited for the others' turns to take it over longer than a start waits, naming one of them.
    for (const refusal of refusals) t.match(refusal, new RegExp(`is served by process ${holders[0]};|is being claimed by process \\d+ too`));
    release?.();
  });
}
