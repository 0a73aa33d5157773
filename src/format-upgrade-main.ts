import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { loadConfig } from './config.js';
import { closeServices, openServices } from './services.js';
import { failureText } from './lib/failure.js';

/**
 * Ends this process once the server that started it (PID `server`) is gone (`kill -9`), as a stop
 * asked of the server ends it: a later start of an older build, or a `restore --force`, could claim
 * the data dir while this one moved it still. Watched from a thread of its own, since a step's
 * transaction holds the main thread for as long as it runs; ended mid-step, that step is not committed.
 * The server is gone when this process's parent is another (it was reparented), which no reuse of
 * the server's PID can hide.
 */
async function endWithServer(server: number): Promise<void> {
  const watch = `
    const { writeSync } = require('node:fs');
    const { parentPort } = require('node:worker_threads');
    const server = ${server};
    const check = () => {
      if (process.ppid === server) return;
      try { writeSync(2, 'The server that started this data format upgrade (process ' + server + ') is gone: stopping the upgrade\\n'); } catch {}
      process.kill(process.pid, 'SIGTERM');
    };
    check();
    parentPort.postMessage('watching');
    setInterval(check, 100);
  `;
  const watcher = new Worker(watch, { eval: true });
  // No step before its first check: a worker starts apart, and small steps were all committed by then
  // for a server killed as this process started.
  await once(watcher, 'message');
  watcher.unref();
}

// The child process of `upgradeFormatApart`, given the server's PID: opening the services migrates the
// data dir, and closing them ends the process with the memory the migration took.
// Unlike the server, it lets no unobserved commit failure of lmdb-js pass (`unhandledRejection`): when
// a step's large commit fails (a full disk), the promise it awaits may never settle, and the child
// would end with exit 0 as if it were done.
await endWithServer(Number(process.argv[2]));
try {
  await closeServices(await openServices(loadConfig(process.env)));
} catch (error) {
  process.stderr.write(`${failureText(error, 'Cannot upgrade the data format: ', process.env)}\n`);
  process.exitCode = 1;
}
