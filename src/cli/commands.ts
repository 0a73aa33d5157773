import type { Command } from './command.js';
import { appCreate, appList, credentialCreate, credentialList, credentialRevoke } from './application-commands.js';
import { backup, restore } from './backup-commands.js';
import { keysRotate } from './key-commands.js';
import { verify } from './verify-command.js';

/** Every CLI command by the words that name it; adding one is one line here. */
export const commands: Readonly<Record<string, Command>> = {
  'app create': appCreate,
  'app list': appList,
  'credential create': credentialCreate,
  'credential list': credentialList,
  'credential revoke': credentialRevoke,
  'keys rotate': keysRotate,
  backup,
  restore,
  verify,
};
