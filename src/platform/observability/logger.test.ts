import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

function capture() {
  const lines: string[] = [];
  const log = createLogger('info', new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } }));
  return { log, lines };
}

describe('logger', () => {
  it('a database error never logs its statement or bound values (password hashes, keys, tokens)', () => {
    const { log, lines } = capture();
    const cause = Object.assign(new Error('inner'), { params: ['$2b$12$cause-hash'] });
    const err = Object.assign(new Error('duplicate key value'), { code: '23505', query: 'INSERT INTO credentials ...', params: ['$2b$12$secrethash', 'aes-key-hex'], parameters: ['x'], queryOptions: {} }, { cause });
    log.error({ err }, 'request failed');
    const line = lines.join('');
    const logged = JSON.parse(line).err as { message: string; err_code: string };
    expect(logged.err_code).toBe('23505'); // kept (under another name: `code` is redacted)
    expect(logged.message).toContain('duplicate key value');
    for (const secret of ['$2b$12$secrethash', 'aes-key-hex', 'INSERT INTO credentials', '$2b$12$cause-hash']) expect(line).not.toContain(secret);
  });

  it('redacts secrets by key name', () => {
    const { log, lines } = capture();
    log.info({ body: { password: 'Vt7#qLm2!xRp9$', code: '123456', answers: ['nairobi'], pin: '2580', current_pin: '7391', new_pin: '4826' } }, 'x');
    log.info({ req: { headers: { 'x-gateway-key': 'gateway-key-0123456789abcdef0123456789' } } }, 'y');
    const line = lines.join('');
    for (const secret of ['Vt7#qLm2!xRp9$', '123456', 'nairobi', '2580', '7391', '4826', 'gateway-key-0123456789abcdef0123456789']) expect(line).not.toContain(secret);
  });
});
