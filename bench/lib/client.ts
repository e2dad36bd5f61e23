/**
 * A lean HTTP/1.1 client for the closed-loop drivers: node:http with keep-alive. On this 2-core
 * machine the load generator shares the CPU with the server, and fetch (undici) spends several
 * times more CPU per request than this, which would be taken from the server under test.
 */
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

export function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        data += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Closes the idle keep-alive sockets, so a stopped server is not kept waiting. */
export function closeIdle(): void {
  agent.destroy();
}
