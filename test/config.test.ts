import t from 'tap';
import { loadConfig, ConfigError } from '../src/config.js';
import { resolve } from 'node:path';

t.test('defaults (ADDENDUM §9) and the names derived from the brand (§0)', async (t) => {
  const config = loadConfig({});
  t.match(config, { port: 3000, host: '127.0.0.1', brand: 'svc', logLevel: 'info', adminToken: undefined, publicUrl: 'http://localhost:3000', maxActors: 10_000, maxActorBytes: 32 * 1024 * 1024 });
  t.same(config.names, {
    appKeyHeader: 'x-svc-app-key',
    appSecretHeader: 'x-svc-app-secret',
    userField: 'svc_user',
    reservedNamespace: 'svc:',
    claimPrefix: 'https://auth.svc.io/',
  });
  const branded = loadConfig({ SVC_BRAND: 'acme2', PORT: '8080', SVC_PUBLIC_URL: 'https://id.example/' });
  t.equal(branded.names.appKeyHeader, 'x-acme2-app-key');
  t.equal(branded.publicUrl, 'https://id.example');
  t.ok(Object.isFrozen(branded) && Object.isFrozen(branded.names));
  t.same(loadConfig({ SVC_CORS_ORIGINS: ' https://a.example, ,https://b.example' }).corsOrigins, ['https://a.example', 'https://b.example']);
  t.equal(loadConfig({ PORT: '' }).port, 3000, 'an empty variable counts as unset');
  t.equal(config.dataDir, resolve('./data'), 'SVC_DATA_DIR defaults to ./data');
  t.equal(loadConfig({ PORT: '8080' }).publicUrl, 'http://localhost:8080', 'SVC_PUBLIC_URL defaults to http://localhost:$PORT');
});

t.test('PORT 0 (any free port) needs SVC_PUBLIC_URL: the default would name port 0', async (t) => {
  for (const env of [{ PORT: '0' }, { PORT: '0', SVC_PUBLIC_URL: '' }]) {
    const error = errorOf(() => loadConfig(env));
    t.ok(error instanceof ConfigError, JSON.stringify(env));
    t.match((error as Error).message, /SVC_PUBLIC_URL: is required when PORT is 0/);
  }
  t.equal(loadConfig({ PORT: '0', SVC_PUBLIC_URL: 'https://id.example' }).publicUrl, 'https://id.example');
});

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

t.test('a bad value is refused with a message naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /PORT: must be a whole number/],
    [{ PORT: '70000' }, /PORT: must be at most 65535/],
    [{ HOST: '[::1]' }, /HOST: must be an IP address or a host name/],
    [{ HOST: 'localhost:3000' }, /HOST: must be an IP address or a host name/],
    [{ HOST: '-bad.example' }, /HOST: must be an IP address or a host name/],
    [{ SVC_BRAND: 'Acme!' }, /SVC_BRAND: lowercase letters and digits only/],
    [{ SVC_PUBLIC_URL: 'not a url' }, /SVC_PUBLIC_URL: must be an absolute URL/],
    [{ SVC_ADMIN_TOKEN: 'short' }, /SVC_ADMIN_TOKEN: must be at least 16 characters/],
    // Sent as one bearer token, it could never be matched: every admin request would answer 401.
    [{ SVC_ADMIN_TOKEN: 'correct horse battery staple' }, /SVC_ADMIN_TOKEN: must not contain whitespace/],
    [{ SVC_ADMIN_TOKEN: 'admin-token-0123456789abcdef\n' }, /SVC_ADMIN_TOKEN: must not contain whitespace/],
    [{ SVC_LOG_LEVEL: 'loud' }, /SVC_LOG_LEVEL/],
    [{ SVC_MAX_ACTORS: '0' }, /SVC_MAX_ACTORS: must be at least 1/],
    [{ SVC_MAX_ACTOR_BYTES: String(2 ** 40 + 1) }, /SVC_MAX_ACTOR_BYTES: must be at most 1099511627776/],
    [{ SVC_JSON_LIMIT: '1.5' }, /SVC_JSON_LIMIT/],
    // uWS closes, unanswered, a connection whose Content-Length has 10 digits or more.
    [{ SVC_JSON_LIMIT: '1000000000' }, /SVC_JSON_LIMIT: must be at most 999999999/],
    [{ SVC_MULTIPART_LIMIT: String(1 << 30) }, /SVC_MULTIPART_LIMIT: must be at most 999999999/],
    [{ SVC_PUBLIC_URL: 'ftp://files.example' }, /SVC_PUBLIC_URL: must be an http\(s\) URL/],
    [{ SVC_PUBLIC_URL: 'http://x.example/base?a=1' }, /SVC_PUBLIC_URL: must be a base URL/],
    [{ SVC_PUBLIC_URL: 'http://x.example/#frag' }, /SVC_PUBLIC_URL: must be a base URL/],
    [{ SVC_PUBLIC_URL: 'http://user:pw@x.example' }, /SVC_PUBLIC_URL: must be a base URL/],
    [{ SVC_PUBLIC_URL: 'http://x.example/a b' }, /SVC_PUBLIC_URL: must be a base URL/],
    [{ SVC_CORS_ORIGINS: 'https://app.example, notanorigin' }, /SVC_CORS_ORIGINS/],
    [{ SVC_CORS_ORIGINS: 'https://app.example/path' }, /SVC_CORS_ORIGINS/],
    // Never equal to an Origin header, so never matched: browsers send lower case and no default port.
    [{ SVC_CORS_ORIGINS: 'https://App.example' }, /SVC_CORS_ORIGINS/],
    [{ SVC_CORS_ORIGINS: 'https://app.example:443' }, /SVC_CORS_ORIGINS/],
    [{ SVC_CORS_ORIGINS: 'https://*.app.example' }, /SVC_CORS_ORIGINS/],
    [{ SVC_CORS_ORIGINS: 'https://user@app.example' }, /SVC_CORS_ORIGINS/],
    // Any origin would be allowed: the list beside it would mean nothing.
    [{ SVC_CORS_ORIGINS: '*,https://a.example' }, /SVC_CORS_ORIGINS: \* must stand alone/],
    [{ SVC_CORS_ORIGINS: 'https://a.example, *' }, /SVC_CORS_ORIGINS: \* must stand alone/],
    [{ SVC_RATE_LIMIT_APP: '5/0' }, /SVC_RATE_LIMIT_APP: a limit needs a rate above 0 and a burst of at least 1/],
    [{ SVC_RATE_LIMIT_HUB_IP: '0/3' }, /SVC_RATE_LIMIT_HUB_IP/],
    [{ SVC_RATE_LIMIT_ADMIN_FAILURES: '2/0' }, /SVC_RATE_LIMIT_ADMIN_FAILURES/],
  ];
  for (const [env, message] of cases) {
    const error = errorOf(() => loadConfig(env));
    t.ok(error instanceof ConfigError, `${JSON.stringify(env)} is a ConfigError`);
    t.match((error as Error).message, message);
  }
  t.throws(() => loadConfig({ PORT: 'x', SVC_BRAND: 'A' }), { message: /PORT[\s\S]*SVC_BRAND/ }, 'every problem is listed');
  t.notMatch((errorOf(() => loadConfig({ SVC_ADMIN_TOKEN: 'correct horse battery staple' })) as Error).message, /horse/, 'the token is not shown');
  t.same(loadConfig({ SVC_CORS_ORIGINS: 'https://app.example, http://localhost:5173' }).corsOrigins, ['https://app.example', 'http://localhost:5173']);
  t.same(loadConfig({ SVC_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  for (const host of ['::1', '::', '0.0.0.0', 'localhost', 'svc-identity.internal']) t.equal(loadConfig({ HOST: host }).host, host);
  t.same(loadConfig({ SVC_CORS_ORIGINS: ' * , ' }).corsOrigins, ['*']);
  t.match(loadConfig({ SVC_JSON_LIMIT: '999999999', SVC_MULTIPART_LIMIT: '999999999' }), { jsonLimit: 999_999_999, multipartLimit: 999_999_999 });
  t.same(loadConfig({ SVC_RATE_LIMIT_APP: '0' }).rateLimits.app, { perSecond: 0, burst: 0 });
  t.same(loadConfig({}).rateLimits.adminFailures, { perSecond: 1, burst: 10 }, 'failed admin authentications are limited by default');
});
