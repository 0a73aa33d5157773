import t from 'tap';
import { startServer, type TestServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';
import { buildRoutes } from '../../src/app.js';
import { manualClock } from '../../src/lib/clock.js';
import { userLock } from '../../src/features/users/directory.js';

// Every route × every kind of caller that must be refused: the refusal's status and code, and that
// nothing of another application or user shows in the answer.
const clock = manualClock(Date.now());
const server: TestServer = await startServer(t, { clock });
const { deps } = server;
const names = deps.config.names;

const other = await deps.apps.create('other');
const otherCredential = await deps.apps.createCredential(other.id);
const revoked = await deps.apps.createCredential(server.app.id);
await deps.apps.revokeCredential(server.app.id, revoked.key);

const alice = await tokenFor(server, { email: 'alice@example.com' });
const outsider = await tokenFor(server, { email: 'mallory@example.com' }, other.id);
const expiring = await tokenFor(server, { email: 'late@example.com' });
const disabled = await tokenFor(server, { email: 'off@example.com' });
await deps.runtime.run([userLock(server.app.id, disabled.userId)], (turn) =>
  deps.users.change(turn, server.app.id, disabled.userId, { type: 'user.disable', at: turn.now }),
);
const revokedUser = await tokenFor(server, { email: 'gone@example.com' });
clock.advance(1000);
await deps.runtime.run([userLock(server.app.id, revokedUser.userId)], (turn) =>
  deps.users.change(turn, server.app.id, revokedUser.userId, { type: 'user.revokeAll', at: turn.now }),
);

const appHeaders = (key: string, secret: string) => ({ [names.appKeyHeader]: key, [names.appSecretHeader]: secret });

interface Caller {
  name: string;
  headers: () => Record<string, string>;
  status: number;
  code?: string;
}

const platformCallers: Caller[] = [
  { name: 'no credentials', headers: () => ({}), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'key without secret', headers: () => ({ [names.appKeyHeader]: server.app.key }), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'wrong secret', headers: () => appHeaders(server.app.key, 'sec_' + 'x'.repeat(43)), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'revoked credential', headers: () => appHeaders(revoked.key, revoked.secret), status: 401, code: 'E_UNAUTHORIZED' },
  { name: "another app's credentials", headers: () => appHeaders(otherCredential.key, otherCredential.secret), status: 403, code: 'E_FORBIDDEN' },
  { name: 'a user token instead', headers: () => ({ authorization: `Bearer ${alice.token}` }), status: 401, code: 'E_UNAUTHORIZED' },
];

const bearer = (token: string) => () => ({ authorization: `Bearer ${token}` });
const userCallers = (appScoped: boolean): Caller[] => [
  { name: 'no token', headers: () => ({}), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'garbage token', headers: bearer('not.a.jwt'), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'app credentials instead', headers: () => appHeaders(server.app.key, server.app.secret), status: 401, code: 'E_UNAUTHORIZED' },
  { name: 'disabled user', headers: bearer(disabled.token), status: 401, code: 'E_USER_DISABLED' },
  { name: 'revoked session', headers: bearer(revokedUser.token), status: 401, code: 'E_TOKEN_REVOKED' },
  ...(appScoped ? [{ name: "another app's user", headers: bearer(outsider.token), status: 403, code: 'E_FORBIDDEN' }] : []),
];

const sampleValue = (param: string) => {
  switch (param) {
    case 'app':
      return server.app.id;
    case 'user':
      return alice.userId;
    default:
      return `${param}_01HZZZZZZZZZZZZZZZZZZZZZZZ`;
  }
};

for (const route of buildRoutes(deps)) {
  const path = route.path.replace(/:([a-z_]+)/gi, (_m, name: string) => sampleValue(name));
  const callers = route.path.startsWith('/applications/')
    ? platformCallers
    : route.path.startsWith('/me/')
      ? userCallers(route.path.startsWith('/me/applications/'))
      : [];
  if (callers.length === 0) continue;
  t.test(`${route.method} ${route.path}`, async (t) => {
    for (const caller of callers) {
      const response = await server.request(route.method, path, {
        headers: caller.headers(),
        body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      });
      t.equal(response.status, caller.status, `${caller.name} → ${caller.status}`);
      if (caller.code) t.equal(response.body?.code, caller.code, `${caller.name} → ${caller.code}`);
      t.notMatch(response.text, other.id, `${caller.name} sees nothing of another app`);
    }
  });
}

t.test('an expired token is refused with E_TOKEN_EXPIRED on every /me route', async (t) => {
  clock.advance((deps.config.accessTokenTtlSeconds + 1) * 1000);
  for (const route of buildRoutes(deps).filter((r) => r.path.startsWith('/me/'))) {
    const path = route.path.replace(/:([a-z_]+)/gi, (_m, name: string) => sampleValue(name));
    const response = await server.request(route.method, path, { token: expiring.token, body: route.method === 'GET' ? undefined : {} });
    t.equal(response.status, 401, `${route.method} ${route.path}`);
    t.equal(response.body?.code, 'E_TOKEN_EXPIRED');
  }
});
