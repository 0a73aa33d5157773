import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  hitCount?: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface HotFunction {
  share: number;
  name: string;
  where: string;
}

/**
 * The functions with the most self time in the `.cpuprofile` files node wrote into `dir`, as shares
 * of the busy time: `(idle)` is left out, since the service idles while the ceiling is measured.
 */
export async function hottestFunctions(dir: string, top = 25): Promise<HotFunction[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  const selfHits = new Map<string, { name: string; where: string; hits: number }>();
  let total = 0;
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as { nodes: ProfileNode[] };
    for (const node of profile.nodes) {
      const hits = node.hitCount ?? 0;
      const { functionName, url, lineNumber } = node.callFrame;
      if (!hits || functionName === '(idle)') continue;
      total += hits;
      const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
      const key = `${functionName}@${where}`;
      const entry = selfHits.get(key) ?? { name: functionName || '(anonymous)', where, hits: 0 };
      entry.hits += hits;
      selfHits.set(key, entry);
    }
  }
  return [...selfHits.values()]
    .sort((a, b) => b.hits - a.hits)
    .slice(0, top)
    .map((e) => ({ share: e.hits / Math.max(1, total), name: e.name, where: e.where }));
}

function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('node_modules/');
  if (modules >= 0) return path.slice(modules + 'node_modules/'.length);
  return path.startsWith('/') ? relative(process.cwd(), path) : path;
}

export const formatHotFunctions = (hot: readonly HotFunction[]) =>
  hot.map((h) => `  ${(h.share * 100).toFixed(1).padStart(5)}%  ${h.name}  ${h.where}`).join('\n');
