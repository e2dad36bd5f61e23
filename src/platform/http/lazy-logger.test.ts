import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { lazyChildLogger } from './lazy-logger.js';

function capture(level = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level, redact: { paths: ['*.password'], censor: '[redacted]' } }, new Writable({ write(c, _e, done) { lines.push(JSON.parse(String(c))); done(); } }));
  return { log, lines };
}

describe('lazy request logger', () => {
  it('makes no child until something is logged, and none for a level that is off', () => {
    const { log } = capture('info');
    const child = vi.spyOn(log, 'child');
    const lazy = lazyChildLogger(log, { reqId: 'r-1' }, {});
    lazy.debug('not at info');
    expect(child).not.toHaveBeenCalled();
    lazy.info('now');
    lazy.warn('again');
    expect(child).toHaveBeenCalledTimes(1);
  });

  it('logs with the request bindings and the parent\'s redaction', () => {
    const { log, lines } = capture();
    lazyChildLogger(log, { reqId: 'r-2' }, {}).error({ body: { password: 'hunter2' } }, 'refused');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r-2', msg: 'refused', level: 50, body: { password: '[redacted]' } });
  });

  it('a route-level log level gets a real child at that level', () => {
    const { log, lines } = capture('info');
    const route = lazyChildLogger(log, { reqId: 'r-3' }, { level: 'debug' });
    route.debug('shown');
    expect(lines.map((l) => l.msg)).toEqual(['shown']);
  });
});
