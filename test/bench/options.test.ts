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

t.test('--restart-after-seeding measures the routes in a service that did not seed', async (t) => {
  t.equal(parseOptions([]).restartAfterSeeding, false);
  t.equal(parseOptions(['--restart-after-seeding']).restartAfterSeeding, true);
  const error = t.throws(() => parseOptions(['--restart-after-seeding=yes']), /does not take an argument/, 'a switch takes no value');
  t.type(error, UsageError);
});

t.test('--service-log names a file every start of the service appends its output to', async (t) => {
  t.equal(parseOptions([]).serviceLog, undefined);
  t.equal(parseOptions(['--service-log', '/tmp/gc.log']).serviceLog, '/tmp/gc.log');
  t.throws(() => parseOptions(['--service-log']), /argument missing/, 'it needs a file');
});
