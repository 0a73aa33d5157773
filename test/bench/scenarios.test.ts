import t from 'tap';
import { chooseScenarios, scenarios } from '../../bench/scenarios.js';
import { parseOptions, UsageError } from '../../bench/options.js';

const chosen = (...argv: string[]) => chooseScenarios(parseOptions(argv).only).map((s) => s.name);

t.test('--only picks the scenarios whose name holds one of its fragments, every one without it', async (t) => {
  t.same(chosen(), scenarios.map((s) => s.name));
  t.same(chosen('--only', 'Platform Profile,list page (1000'), ['platform profile read', 'user list page (1000, any depth)']);
});

t.test('--only that names no scenario is a usage error listing them, not a run that measures nothing', async (t) => {
  const error = t.throws(() => chosen('--only', 'plaform,wirte'), /--only plaform,wirte names no scenario; they are: health \(kernel floor\); /);
  t.type(error, UsageError);
});
