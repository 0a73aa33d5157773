import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface CeilingProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const SERVER = fileURLToPath(new URL('./ceiling-server.js', import.meta.url));

/** Starts the bare uWS ceiling server in its own process. */
export function startCeiling(): Promise<CeilingProcess> {
  const child = spawn(process.execPath, [SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the ceiling server exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const port = /port (\d+)/.exec(out)?.[1];
      if (port)
        resolve({
          url: `http://127.0.0.1:${port}/`,
          pid: child.pid!,
          async stop() {
            child.kill('SIGTERM');
            await exited;
          },
        });
    });
  });
}
