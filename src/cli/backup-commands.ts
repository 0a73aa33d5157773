import { resolve } from 'node:path';
import { backupDataDir, restoreDataDir } from '../storage/backup.js';
import type { Command } from './command.js';

const force = { force: { type: 'boolean' } } as const;

export const backup: Command = {
  usage: 'FILE [--force]',
  summary: 'write a consistent copy of the data dir to FILE (safe while the server runs)',
  options: force,
  positionals: ['FILE'],
  async run({ options, positionals, config, note }) {
    const file = resolve(positionals[0]);
    await backupDataDir(config.dataDir, file, { force: options.force === true });
    note(`Backed up ${config.dataDir} to ${file}.`);
  },
};

export const restore: Command = {
  usage: 'FILE [--force]',
  summary: 'make an empty or absent data dir hold the backup FILE (--force replaces data: stop the server first)',
  options: force,
  positionals: ['FILE'],
  async run({ options, positionals, config, note }) {
    const file = resolve(positionals[0]);
    await restoreDataDir(config.dataDir, file, { force: options.force === true });
    note(`Restored ${file} into ${config.dataDir}.`);
  },
};
