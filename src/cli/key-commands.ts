import { rotateSigningKeys } from '../auth/signing-keys.js';
import { asJson, type Command } from './command.js';
import { withServices } from './services.js';

export const keysRotate: Command = {
  usage: '[--revoke]',
  summary:
    'add a new signing key; the old one stays published until its tokens have expired, or with --revoke is dropped at once (a key feared leaked: its tokens are refused, clients refresh)',
  options: { revoke: { type: 'boolean' } },
  run: async ({ config, options, ...io }) =>
    io.print(asJson(await withServices(config, (deps) => rotateSigningKeys(deps.signingKeys, { revoke: options.revoke === true })))),
};
