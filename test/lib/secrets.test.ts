import t from 'tap';
import { sameSecret } from '../../src/lib/secrets.js';

// What this cannot show is the point of the function: that its time does not depend on where two
// secrets differ (timing is never asserted in a test); it pins the equality it must still compute.
t.test('sameSecret: equal strings only, whatever position the first difference is at', async (t) => {
  const secret = 'sec_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';
  t.ok(sameSecret(secret, `${secret}`));
  t.ok(sameSecret('', ''));
  for (let i = 0; i < secret.length; i++) {
    const changed = `${secret.slice(0, i)}${secret[i] === 'x' ? 'y' : 'x'}${secret.slice(i + 1)}`;
    t.notOk(sameSecret(secret, changed), `differs at ${i}`);
  }
  t.notOk(sameSecret(secret, secret.slice(0, -1)), 'a prefix');
  t.notOk(sameSecret(secret, `${secret}x`), 'a longer one');
});
