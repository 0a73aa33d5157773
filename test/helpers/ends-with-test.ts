import { fileURLToPath } from 'node:url';

/**
 * Node's flags that make a child process end when this test process does, also when it is killed
 * (ends-with-test.import.mjs). The child must be spawned with its standard input a pipe (`stdio[0]: 'pipe'`),
 * which it holds until this process ends: give them to every server or CLI a test spawns.
 */
export const ENDS_WITH_TEST = ['--import', fileURLToPath(new URL('./ends-with-test.import.mjs', import.meta.url))];
