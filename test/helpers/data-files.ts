import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

/** Every file below `dir`. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The bytes of every file of a data dir, to scan for what must never be stored in clear. */
export const storedBytes = (dataDir: string) => Buffer.concat(filesUnder(dataDir).map((file) => readFileSync(file)));

/**
 * A hash of every file of a data dir, its name, mode and bytes, but LMDB's lock file (every reader
 * takes a slot in it): "did opening it change anything?".
 */
export function dataDirDigest(dataDir: string): string {
  const hash = createHash('sha256');
  for (const file of filesUnder(dataDir).sort()) {
    if (basename(file) === 'lock.mdb') continue;
    hash.update(`\0${relative(dataDir, file)}\0${statSync(file).mode}\0`).update(readFileSync(file));
  }
  return hash.digest('hex');
}
