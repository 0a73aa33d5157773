import { asJson, CommandError, type Command } from './command.js';
import { withServices } from './services.js';
import { verifyStore, type VerifyReport } from '../verify/invariants.js';
import { allInvariants } from '../verify/all.js';
import { DataDirNotReady } from '../storage/not-ready.js';

/** A data dir verify cannot open without changing it, as its one problem: nothing else is checked. */
function notReadyReport(error: unknown): VerifyReport {
  if (!(error instanceof DataDirNotReady)) throw error;
  return { checked: [], problems: [`data dir: ${error.message}`] };
}

export const verify: Command = {
  usage: '',
  summary: 'check the stored data, read-only: counters equal recounts, indexes and read models agree with records',
  async run({ config, ...io }) {
    const report = await withServices(config, (deps) => verifyStore(deps, allInvariants), { readOnly: true }).catch(notReadyReport);
    io.print(asJson(report));
    if (report.problems.length > 0) throw new CommandError(`${report.problems.length} problem(s) found`);
  },
};
