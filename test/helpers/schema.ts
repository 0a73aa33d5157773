import { startServer, type TestServer } from './server.js';
import type { AppSchema } from '../../src/features/applications/schemas.js';

/** A test server whose default application has `schema`. */
export async function startServerWithSchema(
  t: Parameters<typeof startServer>[0],
  schema: Partial<AppSchema>,
  options: Parameters<typeof startServer>[1] = {},
): Promise<TestServer> {
  const server = await startServer(t, options);
  await server.deps.apps.update(server.app.id, { schema: { fields: {}, allow_unknown_fields: true, ...schema } });
  return server;
}
