import { readFile } from 'node:fs/promises';
import { parseInput, shownPath } from '../lib/validate.js';
import { readJsonText } from '../lib/json-text.js';
import { CreateAppSchema } from '../features/applications/schemas.js';
import { shownApp } from '../features/applications/store.js';
import { asJson, UsageError, type Command } from './command.js';
import { withServices } from './services.js';

/** Read as a JSON body is over HTTP (the admin API takes the same schema): a repeated key is refused, not taken last. */
async function readJsonFile(path: string): Promise<unknown> {
  const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`Cannot read ${path}: ${error.code ?? error.message}`);
  });
  const read = readJsonText(bytes);
  if ('value' in read) return read.value;
  const problem = 'problem' in read ? read.problem : `${shownPath(read.loneSurrogate.path)}: ${read.loneSurrogate.problem}`;
  throw new UsageError(`${path} is not valid JSON: ${problem}`);
}

export const appCreate: Command = {
  usage: '--name N [--schema FILE]',
  summary: 'create an application (FILE: its profile schema as JSON)',
  options: { name: { type: 'string' }, schema: { type: 'string' } },
  required: ['name'],
  async run({ options, config, ...io }) {
    const schema = typeof options.schema === 'string' ? await readJsonFile(options.schema) : undefined;
    const input = parseInput(CreateAppSchema, { name: options.name, schema });
    const app = await withServices(config, (deps) => deps.apps.create(input.name, input.schema), { create: true });
    io.print(asJson(app));
  },
};

export const appList: Command = {
  usage: '',
  summary: 'list applications',
  run: async ({ config, ...io }) => io.print(asJson(await withServices(config, (deps) => deps.apps.list().map(shownApp)))),
};

export const credentialCreate: Command = {
  usage: '--app A',
  summary: 'add a key/secret pair to an application (the secret is shown this once)',
  options: { app: { type: 'string' } },
  required: ['app'],
  async run({ options, config, ...io }) {
    const credential = await withServices(config, (deps) => deps.apps.createCredential(String(options.app)));
    io.print(asJson(credential));
    io.note('Keep the secret now: it is stored only as a hash and cannot be shown again.');
  },
};

export const credentialList: Command = {
  usage: '--app A',
  summary: "list an application's credentials (secrets masked)",
  options: { app: { type: 'string' } },
  required: ['app'],
  run: async ({ options, config, ...io }) =>
    io.print(asJson(await withServices(config, (deps) => deps.apps.listCredentials(String(options.app))))),
};

export const credentialRevoke: Command = {
  usage: '--app A --key K',
  summary: 'delete a credential; it stops working on the next request, also in a running server',
  options: { app: { type: 'string' }, key: { type: 'string' } },
  required: ['app', 'key'],
  async run({ options, config, ...io }) {
    await withServices(config, (deps) => deps.apps.revokeCredential(String(options.app), String(options.key)));
    io.note(`Revoked ${options.key}.`);
  },
};
