import { resolve } from 'node:path';
import { backupDataDir, restoreDataDir } from '../storage/backup.js';
import type { Command } from './command.js';

/** A command that moves the data dir to or from FILE; `--force` lets it replace what is there. */
function fileCommand(
  summary: string,
  transfer: (dataDir: string, file: string, options: { force: boolean }) => Promise<void>,
  done: (dataDir: string, file: string) => string,
): Command {
  return {
    usage: 'FILE [--force]',
    summary,
    options: { force: { type: 'boolean' } },
    positionals: ['FILE'],
    async run({ options, positionals, config, note }) {
      const file = resolve(positionals[0]);
      await transfer(config.dataDir, file, { force: options.force === true });
      note(done(config.dataDir, file));
    },
  };
}

export const backup = fileCommand(
  'write a consistent copy of the data dir to FILE (safe while the server runs)',
  backupDataDir,
  (dataDir, file) => `Backed up ${dataDir} to ${file}.`,
);

export const restore = fileCommand(
  'make an empty or absent data dir hold the backup FILE (--force replaces data: stop the server first)',
  restoreDataDir,
  (dataDir, file) => `Restored ${file} into ${dataDir}.`,
);
