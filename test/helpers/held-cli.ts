import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compiledService } from './build.js';
import { ENDS_WITH_TEST } from './ends-with-test.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

/**
 * Runs `node <args>` on `dataDir` (ending with this test process), which holds still once it prints `paused` (until SIGUSR2); resolves
 * with the child once it does, and its exit code promise.
 */
export async function pausedChild(t: Tap, args: string[], dataDir: string) {
  const child = spawn(process.execPath, [...ENDS_WITH_TEST, ...args], { env: { ...process.env, NODE_OPTIONS: '', SVC_DATA_DIR: dataDir }, stdio: ['pipe', 'pipe', 'pipe'] });
  t.teardown(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => output.includes('paused') && resolve());
    exited.then((code) => reject(new Error(`exited ${code} before pausing: ${output}`)));
  });
  const resume = async () => {
    child.kill('SIGUSR2');
    return { code: await exited, output };
  };
  return { pid: child.pid!, resume };
}

/** Holds the caller until SIGUSR2, saying `paused` first (a timer keeps the process alive meanwhile). */
export const PAUSE =
  "{ process.stdout.write('paused\\n'); const alive = setInterval(() => {}, 60_000); " +
  "await new Promise((resolve) => process.once('SIGUSR2', resolve)); clearInterval(alive); }";

/** The real CLI running `args` on `dataDir`, held (until resumed) after its first call of `fs.promises[hold]`. */
export async function heldCli(t: Tap, dir: string, dataDir: string, hold: 'copyFile' | 'mkdtemp' | 'open', args: string[]) {
  const hook = join(dir, `hold-after-${hold}.mjs`);
  writeFileSync(
    hook,
    [
      "import fs from 'node:fs';",
      "import { syncBuiltinESMExports } from 'node:module';",
      `const original = fs.promises.${hold};`,
      'let held = false;',
      `fs.promises.${hold} = async (...args) => { const done = await original(...args); if (!held) { held = true; ${PAUSE} } return done; };`,
      'syncBuiltinESMExports();',
    ].join('\n'),
  );
  return pausedChild(t, ['--import', hook, join(await compiledService(), 'src', 'cli.js'), ...args], dataDir);
}
