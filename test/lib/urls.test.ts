import t from 'tap';
import { isAbsoluteHttpUrl, isHttpOrigin, isLocalPath, underBase } from '../../src/lib/urls.js';

t.test('absolute http(s) URLs as written, and nothing a parser would read as another URL', async (t) => {
  for (const good of ['https://app.example/cb', 'http://localhost:3000/x?y=1#z', 'HTTPS://APP.EXAMPLE']) t.ok(isAbsoluteHttpUrl(good), good);
  const bad = [
    'http:host', ' http://x.example', 'http://x.example ', 'https:///evil.example', 'https://evil.example\\.a.example/cb',
    'https://a.example\\@evil.example/cb', 'http:\\\\evil.example', 'http://x.example/\t#a', 'http://x.example/\r\nSet-Cookie:a=b',
    'https://a.example/c\u0001b', 'https://a.example/\u0000', 'javascript:alert(1)', 'ftp://x.example', '/path', '//evil.example', '',
  ];
  for (const url of bad) t.notOk(isAbsoluteHttpUrl(url), JSON.stringify(url));
});

t.test('http(s) origins as browsers send them, and no other URL', async (t) => {
  for (const good of ['https://a.example', 'http://localhost:3000', 'https://a.example:8443', 'http://[::1]:8080']) t.ok(isHttpOrigin(good), good);
  const bad = [
    'https://a.example/', 'https://a.example/app', 'https://a.example?x=1', 'https://a.example#top', 'https://user@a.example',
    'https://A.example', 'HTTPS://a.example', 'https://a.example:443', 'http://a.example:80', 'ftp://a.example', 'https://bücher.example',
    'http:a.example', ' https://a.example', 'null', '', 'https://*.a.example', 'https://*',
  ];
  for (const url of bad) t.notOk(isHttpOrigin(url), JSON.stringify(url));
});

t.test('local paths stay on the origin they are resolved against, and under its path', async (t) => {
  for (const good of ['/', '/welcome', '/a/b?c=d#e', '/a//b', '/.well-known/x', '/a..b/...', '/%2e%2e%2e', '/a?b=/../c#/./d']) {
    t.ok(isLocalPath(good), good);
    const url = underBase('https://id.example/identity', good);
    t.equal(url.origin, 'https://id.example');
    t.ok(url.pathname.startsWith('/identity/'), `${good} stays under /identity`);
  }
  const bad = [
    '//evil.example', '/\\evil.example/x', '/\t/evil.example/', '/\n/evil.example', 'welcome', 'https://x.example/', '',
    '/..', '/../app', '/.//x', '/a/./b', '/a/.', '/%2e%2E/app', '/%2E/x', '/.%2e/x', '/a/..?b', '/a/.#b',
  ];
  for (const url of bad) t.notOk(isLocalPath(url), JSON.stringify(url));
});

t.test('a local path is appended to its base, path and all', async (t) => {
  t.equal(underBase('https://id.example/identity', '/welcome?x=1#y').href, 'https://id.example/identity/welcome?x=1#y');
  t.equal(underBase('https://id.example', '/welcome').href, 'https://id.example/welcome');
  t.equal(underBase('https://id.example/identity', '/').href, 'https://id.example/identity/');
});
