import { loadConfig } from './config.js';
import { closeServices, openServices } from './services.js';
import { failureText } from './lib/failure.js';

// The child process of `upgradeFormatApart`: opening the services migrates the data dir, and closing
// them ends the process with the memory the migration took.
// Unlike the server, it lets no unobserved commit failure of lmdb-js pass (`unhandledRejection`): when
// a step's large commit fails (a full disk), the promise it awaits may never settle, and the child
// would end with exit 0 as if it were done.
try {
  await closeServices(await openServices(loadConfig(process.env)));
} catch (error) {
  process.stderr.write(`${failureText(error, 'Cannot upgrade the data format: ', process.env)}\n`);
  process.exitCode = 1;
}
