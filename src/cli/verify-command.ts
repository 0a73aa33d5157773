import { asJson, CommandError, type Command } from './command.js';
import { withServices } from './services.js';
import { verifyStore } from '../verify/invariants.js';
import { allInvariants } from '../verify/all.js';

export const verify: Command = {
  usage: '',
  summary: 'check the stored data: counters equal recounts, indexes and read models agree with records',
  async run({ config, ...io }) {
    const report = await withServices(config, (deps) => verifyStore(deps, allInvariants));
    io.print(asJson(report));
    if (report.problems.length > 0) throw new CommandError(`${report.problems.length} problem(s) found`);
  },
};
