/**
 * The ceiling: a bare uWS handler answering a fixed profile-sized JSON body. Runs as its own
 * process (started by the bench) and prints `port <n>` once it listens.
 */
import { uws } from '../src/http/uws.js';
import { ceilingBody } from './profile-fixture.js';

const body = ceilingBody();
const app = uws.App();
app.any('/*', (res, req) => {
  const answer = () => {
    res.cork(() => {
      res.writeHeader('content-type', 'application/json');
      res.end(body);
    });
  };
  // A request with a body (the routes' PUTs and POSTs) is read to its end first, as a server must.
  const length = Number(req.getHeader('content-length') || '0');
  if (length === 0) {
    answer();
    return;
  }
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, last) => {
    if (last && !aborted) answer();
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('ceiling: cannot listen\n');
    process.exit(1);
  }
  process.stdout.write(`port ${uws.us_socket_local_port(socket as never)}\n`);
});
process.on('SIGTERM', () => process.exit(0));
