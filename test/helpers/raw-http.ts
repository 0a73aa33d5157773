import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Sends bytes exactly as given (no URL normalisation, no header validation) and reads one response.
 * For hostile-input tests: fetch would clean up the very paths and headers we want to send.
 */
export function rawRequest(port: number, head: string, body: Buffer = Buffer.alloc(0), timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms to ${JSON.stringify(head.slice(0, 200))}`));
    }, timeoutMs);
    const tryParse = (final: boolean) => {
      const data = Buffer.concat(chunks);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return final ? fail('connection closed before the response head') : undefined;
      const lines = data.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(lines[0].split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      // An answer to HEAD has no body, whatever length it announces (RFC 9110 §9.3.2).
      const length = head.startsWith('HEAD ') ? 0 : Number(headers['content-length'] ?? 0);
      if (data.length - end - 4 < length) return final ? fail('connection closed mid-body') : undefined;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, headers, body: data.subarray(end + 4, end + 4 + length) });
    };
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`${why} for ${JSON.stringify(head.slice(0, 200))}`));
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  });
}
