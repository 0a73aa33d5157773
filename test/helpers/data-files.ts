import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every file below `dir`. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The bytes of every file of a data dir, to scan for what must never be stored in clear. */
export const storedBytes = (dataDir: string) => Buffer.concat(filesUnder(dataDir).map((file) => readFileSync(file)));
