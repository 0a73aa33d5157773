import { loadConfig } from './config.js';
import { closeServices, openServices } from './services.js';
import { failureText } from './lib/failure.js';

// The child process of `upgradeFormatApart`: opening the services migrates the data dir, and closing
// them ends the process with the memory the migration took.
try {
  await closeServices(await openServices(loadConfig(process.env)));
} catch (error) {
  process.stderr.write(`${failureText(error, 'Cannot upgrade the data format: ', process.env)}\n`);
  process.exitCode = 1;
}
