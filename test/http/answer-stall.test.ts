import t from 'tap';
import { connect } from 'node:net';
import { pino } from 'pino';
import { createHttpServer } from '../../src/http/server.js';
import { jsonBytes } from '../../src/http/reply.js';

// Larger than the kernel's buffers on both sides of a local connection, so a client that reads
// nothing leaves most of it with the server.
const ANSWER = `"${'x'.repeat(48 * 1024 * 1024)}"`;

const server = createHttpServer({
  routes: [{ method: 'GET', path: '/large', handle: () => jsonBytes(ANSWER) }],
  limits: { json: 1024, multipart: 1024 },
  logger: pino({ level: 'silent' }),
  corsOrigins: [],
  corsHeaders: [],
  answerStallMs: 300,
});
const port = await server.listen('127.0.0.1', 0);
t.teardown(async () => {
  await server.drain(1000);
  await server.close();
});

/** A client that asks for the large answer and takes `pauseMs` before reading any of it; resolves with the bytes it got and whether the server closed first. */
function client(pauseMs: number): Promise<{ received: number; closedEarly: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = 0;
    socket.pause();
    socket.write('GET /large HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.on('data', (chunk) => (received += chunk.length));
    socket.on('close', () => resolve({ received, closedEarly: received < ANSWER.length }));
    socket.on('error', () => {});
    setTimeout(() => socket.resume(), pauseMs);
    // Ends the test's own connection once the whole answer is in.
    socket.on('data', () => received > ANSWER.length && socket.end());
  });
}

t.test('a client that takes none of a large answer for the stall time has its connection closed', async (t) => {
  const { closedEarly } = await client(2_000);
  t.ok(closedEarly, 'closed before the answer was taken whole');
});

t.test('one that reads, though it waits a moment first, gets the whole answer', async (t) => {
  const { received } = await client(100);
  t.ok(received > ANSWER.length, `${received} bytes: the whole answer and its head`);
});
