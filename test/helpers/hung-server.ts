import { createServer } from 'node:http';

/** An HTTP server on an ephemeral port that takes requests and never answers them; closed at the test's end. */
export async function hungServer(t: { teardown(fn: () => unknown): void }): Promise<{ port: number }> {
  const hung = createServer(() => {});
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    hung.closeAllConnections();
    hung.close();
  });
  const address = hung.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { port: address.port };
}
