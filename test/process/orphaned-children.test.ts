import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunning } from '../helpers/process-state.js';

/** Node's flags that let a child of this test import the TypeScript helpers as this process does. */
const typeScriptHooks = process.execArgv.filter((flag) => flag.includes('@tapjs/typescript'));

const helper = (name: string) => JSON.stringify(new URL(`../helpers/${name}.ts`, import.meta.url).href);

t.test('a server and a held CLI that a test spawned end when that test process is killed (tap\'s timeout)', async (t) => {
  const dir = t.testdir();
  // A test process: it starts a server and a held CLI through the helpers, then would run on.
  const testProcess = [
    `const { startChildServer } = await import(${helper('child')});`,
    `const { pausedChild, PAUSE } = await import(${helper('held-cli')});`,
    'const t = { teardown() {} };',
    `const server = await startChildServer(t, { dataDir: ${JSON.stringify(join(dir, 'served'))} });`,
    `const held = await pausedChild(t, ['--input-type=module', '-e', PAUSE], ${JSON.stringify(join(dir, 'held'))});`,
    "process.stdout.write(JSON.stringify([server.child.pid, held.pid]) + '\\n');",
    'setInterval(() => {}, 60_000);',
  ].join('\n');
  const { NODE_OPTIONS: _tapHooks, ...env } = process.env;
  const parent = spawn(process.execPath, [...typeScriptHooks, '--input-type=module', '-e', testProcess], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => parent.kill('SIGKILL'));
  let output = '';
  parent.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  parent.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => parent.once('exit', resolve));
  const children = await new Promise<number[]>((resolve, reject) => {
    parent.stdout.on('data', () => output.includes('\n') && resolve(JSON.parse(output.split('\n')[0])));
    exited.then(() => reject(new Error(`the test process ended before it started its children: ${output}`)));
  });
  // Were they left running (the guard failing), they are ended here, not an hour later.
  t.teardown(() => children.filter(isRunning).forEach((pid) => process.kill(pid, 'SIGKILL')));
  t.same(children.filter(isRunning), children, 'both run while their test process does');

  parent.kill('SIGKILL');
  await exited;
  // A bound on being gone at all, generous for a loaded host: not a measure of how soon.
  const deadline = Date.now() + 30_000;
  while (children.some(isRunning) && Date.now() < deadline) await sleep(50);
  t.same(children.filter(isRunning), [], 'both are gone once it is killed');
});
