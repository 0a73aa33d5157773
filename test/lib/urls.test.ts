import t from 'tap';
import { isAbsoluteHttpUrl, isHttpOrigin, isLocalPath } from '../../src/lib/urls.js';

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

t.test('local paths stay on the origin they are resolved against', async (t) => {
  for (const good of ['/', '/welcome', '/a/b?c=d#e', '/.//x']) {
    t.ok(isLocalPath(good), good);
    t.equal(new URL(good, 'https://id.example').origin, 'https://id.example');
  }
  for (const bad of ['//evil.example', '/\\evil.example/x', '/\t/evil.example/', '/\n/evil.example', 'welcome', 'https://x.example/', '']) {
    t.notOk(isLocalPath(bad), JSON.stringify(bad));
  }
});
