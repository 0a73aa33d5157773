import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Inside the checkout so the compiled files resolve `node_modules` like `dist/` does; git-ignored. */
const BUILDS = join(ROOT, 'dist', 'test-build');
const INPUTS = ['src', 'machines', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
const BUILD_TIMEOUT_MS = 5 * 60_000;

function* files(path: string): Generator<string> {
  if (!existsSync(path)) return;
  if (!statSync(path).isDirectory()) return yield path;
  for (const name of readdirSync(path).sort()) yield* files(join(path, name));
}

/** Hash of every input of `tsc -p tsconfig.build.json`: a changed source gets a fresh build. */
function sourceHash(): string {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of files(join(ROOT, input))) hash.update(file.slice(ROOT.length)).update('\0').update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The service compiled to JavaScript, for tests that run it as a child process (the real `main`
 * and CLI entries). Test files running in parallel share one build per source state: the first takes
 * a lock directory and compiles; the others wait for its `complete` marker. Works on a fresh clone
 * (no `dist/` needed) and never touches `dist/src`, which `npm start` owns.
 * Returns the build root: `<root>/src/main.js`, `<root>/src/cli.js`.
 */
export function compiledService(): Promise<string> {
  // One build per test process, so a source edit during a run cannot mix builds within a file.
  return (buildOfThisProcess ??= buildOnce());
}

let buildOfThisProcess: Promise<string> | undefined;

async function buildOnce(): Promise<string> {
  const out = join(BUILDS, sourceHash());
  const complete = join(out, 'complete');
  const lock = `${out}.lock`;
  const deadline = Date.now() + BUILD_TIMEOUT_MS;
  while (!existsSync(complete)) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for the test build in ${out}`);
    await mkdir(BUILDS, { recursive: true });
    const owner = await mkdir(lock).then(
      () => true,
      () => false,
    );
    if (owner) {
      try {
        await writeFile(join(lock, 'pid'), String(process.pid));
        await build(out);
        await writeFile(complete, new Date().toISOString());
        await removeOtherBuilds(out);
      } finally {
        await rm(lock, { recursive: true, force: true });
      }
    } else {
      const pid = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => '0'));
      // A builder that died mid-build leaves its lock behind: take it over.
      if (pid && !isAlive(pid)) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return out;
}

async function build(out: string): Promise<void> {
  await rm(out, { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', out], {
      cwd: ROOT,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`The test build failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Builds of older source states are dead weight; those an hour old cannot still be in use by a run. */
async function removeOtherBuilds(keep: string): Promise<void> {
  const cutoff = Date.now() - 60 * 60_000;
  for (const name of await readdir(BUILDS)) {
    const path = join(BUILDS, name);
    if (path === keep || name.endsWith('.lock') || existsSync(`${path}.lock`)) continue;
    const finished = await stat(join(path, 'complete')).catch(() => undefined);
    if (!finished || finished.mtimeMs < cutoff) await rm(path, { recursive: true, force: true });
  }
}
