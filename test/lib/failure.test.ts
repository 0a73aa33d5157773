import t from 'tap';
import { failureText } from '../../src/lib/failure.js';

t.test('a failure is its message for an operator, its stack at debug level', async (t) => {
  const error = new Error('Cannot listen on 127.0.0.1:3000');
  t.equal(failureText(error, 'Cannot start: ', {}), 'Cannot start: Cannot listen on 127.0.0.1:3000');
  t.equal(failureText(error, 'error: ', { SVC_LOG_LEVEL: 'info' }), 'error: Cannot listen on 127.0.0.1:3000');
  for (const level of ['debug', 'trace']) t.equal(failureText(error, 'error: ', { SVC_LOG_LEVEL: level }), error.stack);
  t.equal(failureText('plain', 'error: ', { SVC_LOG_LEVEL: 'debug' }), 'error: plain', 'a thrown non-error has no stack to show');
});

t.test('a failure with a cause names it: a commit that failed says what the storage failed with', async (t) => {
  const error = new Error('The change could not be stored; try again', { cause: Object.assign(new Error('No space left on device'), { code: 28 }) });
  t.equal(failureText(error, 'Cannot start: ', {}), 'Cannot start: The change could not be stored; try again (No space left on device)');
});
