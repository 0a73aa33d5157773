import t from 'tap';
import { parseOptions, UsageError } from '../../bench/options.js';

t.test('--node-flag passes node flags to every start of the service, in order', async (t) => {
  t.same(parseOptions([]).nodeFlags, []);
  t.same(parseOptions(['--node-flag=--single-threaded-gc', '--node-flag=--max-semi-space-size=64']).nodeFlags, [
    '--single-threaded-gc',
    '--max-semi-space-size=64',
  ]);
});

t.test('--node-flag refuses a value that is not a flag', async (t) => {
  const error = t.throws(() => parseOptions(['--node-flag', 'single-threaded-gc']), /--node-flag takes a node flag/);
  t.type(error, UsageError);
});
