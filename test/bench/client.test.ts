import t from 'tap';
import { hungServer } from '../helpers/hung-server.js';
import { serviceClient } from '../../bench/client.js';

t.test('a call that gets no answer fails after the timeout, naming its method and path but not its query or body', async (t) => {
  const address = await hungServer(t);
  const client = serviceClient(`http://127.0.0.1:${address.port}`, { id: 'app', key: 'key', secret: 'secret' }, 'svc', 200);
  const started = Date.now();
  const error = await client.call('POST', '/hub/sign-in?token=hidden', { body: { password: 'hidden' } }).then(
    () => undefined,
    (error: Error) => error,
  );
  t.equal(error?.message, 'POST /hub/sign-in got no answer within 0.2 s');
  t.ok(Date.now() - started < 5000, 'and does not hang');
});
