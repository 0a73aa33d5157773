import { rotateSigningKeys } from '../auth/signing-keys.js';
import { asJson, type Command } from './command.js';
import { withServices } from './services.js';

export const keysRotate: Command = {
  usage: '',
  summary: 'add a new signing key; the old one stays published until its tokens have expired',
  run: async ({ config, ...io }) =>
    io.print(asJson(await withServices(config, (deps) => rotateSigningKeys(deps.signingKeys)))),
};
