/** A pino logger whose JSON lines a test reads back (level and message, and whatever else was logged). */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export interface LogLine { level: number; msg: string; [key: string]: unknown }

export function captureLog(level: pino.LevelWithSilent = 'info'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as LogLine);
      done();
    },
  });
  return { log: pino({ level }, stream), lines };
}
