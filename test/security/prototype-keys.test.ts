import t from 'tap';
import { startServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';

// Field names that are also members of Object.prototype once made every field-error collector throw (500).
const NAMES = ['constructor', 'valueOf', 'toString', 'hasOwnProperty', '__proto__'];

t.test('field errors under names of Object.prototype members answer 400 naming the field', async (t) => {
  const server = await startServer(t);
  await server.deps.apps.update(server.app.id, { schema: { fields: {}, allow_unknown_fields: false } });
  const { token } = await tokenFor(server, { email: 'ada@example.com' });
  for (const name of NAMES) {
    const bodyWith = (extra: string) => JSON.parse(`{${extra}, "${name}": 1}`);
    const requests = [
      // A strict valibot body (src/lib/validate.ts).
      server.request('POST', '/hub/auth/token', { body: bodyWith('"refresh_token": "x"') }),
      // A profile write body, then its data against the schema (users/request-body.ts, users/profile-change.ts).
      server.request('PUT', `/me/applications/${server.app.id}/data`, { token, body: bodyWith('"data": {}') }),
      server.request('PUT', `/me/applications/${server.app.id}/data`, { token, body: { data: bodyWith('"first_name": "Ada"') } }),
    ];
    for (const res of await Promise.all(requests)) {
      t.equal(res.status, 400, `${name}: ${res.text}`);
      t.ok(Object.hasOwn(res.body.field_errors ?? {}, name), `${name} is named`);
    }
  }
});
