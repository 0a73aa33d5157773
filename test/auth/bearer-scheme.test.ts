import t from 'tap';
import { startServer } from '../helpers/server.js';
import { tokenFor } from '../helpers/tokens.js';

t.test('a bearer token reads the same whether verified before or not; what the pattern refuses stays refused once warm', async (t) => {
  const server = await startServer(t);
  const { token } = await tokenFor(server, { email: 'ada@example.com' });
  const me = (authorization: string) => server.request('GET', `/me/applications/${server.app.id}/data`, { headers: { authorization } });

  const cold = await me(`Bearer ${token}`);
  t.equal(cold.status, 200, 'first use: verified');
  t.equal((await me(`Bearer ${token}`)).status, 200, 'warm');
  t.equal((await me(`bearer   ${token}`)).status, 200, 'the scheme in any case, several spaces: the pattern, then the cache');
  t.equal((await me(`Bearer  ${token}`)).status, 200, 'two spaces after the usual scheme');
  for (const authorization of [`Bearer ${token},`, `Bearer ${token}"`, `Bearer ${token} x`, `Bearer${token}`, `Basic ${token}`]) {
    const refused = await me(authorization);
    t.equal(refused.status, 401, `${authorization.replace(token, '<token>')}: refused`);
    t.equal(refused.body.code, 'E_UNAUTHORIZED');
  }
});
