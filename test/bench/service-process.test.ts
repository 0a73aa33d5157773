import t from 'tap';
import { withoutSecrets } from '../../bench/service-process.js';

t.test('the service log keeps everything but the secret a first start prints', async (t) => {
  const printed = 'Created the default application.\n  app key:    key_abc\n  app secret: sec_RUYCwbKz3mA_nf5q8hTAarYz\n[1:0x1]  303 ms: Scavenge 19.2 (28.3) -> 14.6 (29.6) MB\n';
  const logged = withoutSecrets(printed);
  t.notMatch(logged, /sec_RUYC/);
  t.match(logged, /app secret: \[not logged\]\n/);
  t.equal(logged.replace('[not logged]', 'sec_RUYCwbKz3mA_nf5q8hTAarYz'), printed, 'nothing else changes');
});
