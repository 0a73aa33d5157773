// Loaded (`--import`, see ends-with-test.ts) into a process a test spawns with its standard input piped
// from the test. The test's end of that pipe closes when the test process ends, however it ends (tap's
// timeout kills it), and this process then ends too, rather than hold its port, CPU and temp dir for
// good: Node has no parent-death signal. Never while the test runs, so it ends only as the test ends it.
import { fstatSync } from 'node:fs';

const stdin = fstatSync(0);
if (!stdin.isFIFO() && !stdin.isSocket()) throw new Error('spawned without its standard input piped from the test (stdio[0] "pipe")');
const end = () => process.kill(process.pid, 'SIGKILL');
// Unreferenced: a process that ends by itself (a CLI command) is not kept alive by it.
process.stdin.on('end', end).on('error', end).resume().unref();
