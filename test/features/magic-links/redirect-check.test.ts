import t from 'tap';
import { openStore } from '../../../src/storage/store.js';
import { RegisteredRedirects } from '../../../src/features/oidc-clients/registered-redirects.js';
import { MagicLinks } from '../../../src/features/magic-links/link-store.js';
import { SessionStore } from '../../../src/features/sessions/session-store.js';
import { LinkPurposes } from '../../../src/features/magic-links/purposes.js';
import { ApiError } from '../../../src/lib/errors.js';

const REGISTERED = 'https://app.example/cb';

/** The real link store over a real LMDB, its app `app_1` with one OIDC client. */
async function linksIn(dir: string, teardown: (fn: () => unknown) => void) {
  const store = openStore(dir);
  teardown(() => store.close());
  const clients = store.db<any>('oidc_clients');
  await store.commit(() =>
    clients.put(['app_1', 'oidc_client_1'], { id: 'oidc_client_1', app_id: 'app_1', config: { redirect_uris: [REGISTERED], allowed_origins: ['https://web.example'] } }),
  );
  const pepper = Buffer.alloc(32, 7);
  return new MagicLinks(store, pepper, 'https://id.example/identity', new RegisteredRedirects(store), new SessionStore(store, pepper, 900_000), new LinkPurposes());
}

/** What `requireRedirect` threw for `url`, as the error body would show it. */
function refusalOf(links: MagicLinks, url: string) {
  try {
    links.requireRedirect('app_1', url);
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, code: error.code, redirect_url: error.fieldErrors?.redirect_url };
  }
}

t.test('requireRedirect answers a URL no schema checked with a 400 naming its shape, never a 500', async (t) => {
  const links = await linksIn(t.testdir(), t.teardown);
  for (const url of ['not a url', 'welcome', '', 'http:\\\\evil.example', 'https:///evil.example', 'javascript:alert(1)', '/../app', 'https://elsewhere.example/in\u202Egpj.exe']) {
    t.match(refusalOf(links, url), { status: 400, code: 'E_VALIDATION', redirect_url: [/must be an absolute http\(s\) URL, or a path/] }, JSON.stringify(url));
  }
  t.match(refusalOf(links, '/welcome/%2e%2E/app'), { redirect_url: [/path starting with one \/ with no \. or \.\. segment/] }, 'a dot segment is named as the rule broken');
  t.match(refusalOf(links, 'https://elsewhere.example/cb'), { status: 400, redirect_url: [/must be one of the redirect_uris/] }, 'a good URL, unregistered');
  for (const url of [REGISTERED, `${REGISTERED}#state`, 'https://web.example/any?q', '/welcome']) t.equal(refusalOf(links, url), undefined, url);
});
