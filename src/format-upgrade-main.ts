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
function endWithServer(server: number): void {
  const watch = `
    const { writeSync } = require('node:fs');
    const server = ${server};
    const check = () => {
      if (process.ppid === server) return;
      try { writeSync(2, 'The server that started this data format upgrade (process ' + server + ') is gone: stopping the upgrade\\n'); } catch {}
      process.kill(process.pid, 'SIGTERM');
    };
    check();
    setInterval(check, 100);
  `;
  new Worker(watch, { eval: true }).unref();
}

// The child process of `upgradeFormatApart`, given the server's PID: opening the services migrates the
// data dir, and closing them ends the process with the memory the migration took.
// Unlike the server, it lets no unobserved commit failure of lmdb-js pass (`unhandledRejection`): when
// a step's large commit fails (a full disk), the promise it awaits may never settle, and the child
// would end with exit 0 as if it were done.
endWithServer(Number(process.argv[2]));
try {
  await closeServices(await openServices(loadConfig(process.env)));
} catch (error) {
  process.stderr.write(`${failureText(error, 'Cannot upgrade the data format: ', process.env)}\n`);
  process.exitCode = 1;
}
