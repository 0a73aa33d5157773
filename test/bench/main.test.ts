import t from 'tap';
import { runMain, USAGE_EXIT } from '../../bench/main.js';
import { UsageError } from '../../bench/options.js';

const run = async (main: () => Promise<number>) => {
  const codes: number[] = [];
  let written = '';
  await runMain(main, (code) => codes.push(code), { write: (text: string) => (written += text) });
  return { codes, written };
};

t.test('a bench command exits with its code, 64 and the usage for a wrong command line, 1 and the stack for a failure', async (t) => {
  t.same(await run(async () => 0), { codes: [0], written: '' });
  t.same(await run(async () => 1), { codes: [1], written: '' });

  const usage = await run(async () => {
    throw new UsageError('--users must be a whole number ≥ 1', 'usage: npm run bench -- [--users N]');
  });
  t.same(usage.codes, [USAGE_EXIT]);
  t.equal(USAGE_EXIT, 64);
  t.equal(usage.written, '--users must be a whole number ≥ 1\nusage: npm run bench -- [--users N]\n');

  const failure = await run(async () => {
    throw new Error('wrk died');
  });
  t.same(failure.codes, [1]);
  t.match(failure.written, /^Error: wrk died\n\s+at /);
});
