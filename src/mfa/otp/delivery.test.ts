import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Mailer, MailMessage } from '../../mail/mailer.js';
import { disabledMailer, MailDeliveryError } from '../../mail/mailer.js';
import { ManualClock } from '../../platform/clock.js';
import { loadConfig, type Config } from '../../platform/config.js';
import { DeliveryFailure, OtpDelivery, type CodeDelivery } from './delivery.js';
import { OUTBOX_SIZE } from './outbox.js';

function capture() {
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } }));
  return { log, text: () => lines.join('') };
}

const config = (env: Record<string, string> = {}, devOutbox = true): Config => {
  const c = loadConfig({ NODE_ENV: 'test', ...env });
  return { ...c, mfa: { ...c.mfa, devOutbox } };
};

const sent: MailMessage[] = [];
const smtp: Mailer = { configured: true, send: async (m) => (sent.push(m), { messageId: '<m1@bank.example>' }) };

const email = (code: string, i = 0): CodeDelivery => ({
  method: 'email', userId: 1, language: null, to: `amina${i}@bank.example`, destination: 'a***@bank.example', code, purpose: 'signin', reference: `ref-${i}`,
  recipient: { username: 'amina', fullName: null },
});

describe('development outbox', () => {
  it('takes codes when a method has no transport, and prints them loudly at warn level with the masked address', async () => {
    const { log, text } = capture();
    const d = new OtpDelivery({ config: config(), mailer: disabledMailer, log, clock: new ManualClock() });
    expect(d.via('email')).toBe('dev_outbox');
    expect(d.via('sms')).toBe('dev_outbox');
    expect(await d.deliver(email('731904'))).toEqual({ via: 'dev_outbox', ref: 'dev-outbox:ref-0' });
    expect(d.outbox.latest('amina0@bank.example')).toMatchObject({ code: '731904', destination: 'a***@bank.example', subject: 'Your sign-in code' });
    const line = JSON.parse(text().trim()) as { level: number; msg: string; destination: string };
    expect(line.level).toBe(40); // warn
    expect(line.msg).toMatch(/^DEVELOPMENT OUTBOX .*one-time code 731904 for a\*\*\*@bank\.example$/);
    expect(line.destination).toBe('a***@bank.example');
  });

  it(`keeps the last ${OUTBOX_SIZE} messages`, async () => {
    const d = new OtpDelivery({ config: config(), mailer: disabledMailer, log: pino({ level: 'silent' }), clock: new ManualClock() });
    for (let i = 0; i < OUTBOX_SIZE + 7; i++) await d.deliver(email(String(i).padStart(6, '0'), i));
    expect(d.outbox.messages.length).toBe(OUTBOX_SIZE);
    expect(d.outbox.messages[0]!.code).toBe('000007');
    expect(d.outbox.messages.at(-1)!.code).toBe(String(OUTBOX_SIZE + 6).padStart(6, '0'));
  });

  it('is not used, and nothing about the code is logged, when a transport is configured', async () => {
    const { log, text } = capture();
    const d = new OtpDelivery({ config: config({ SMS_GATEWAY_URL: 'http://127.0.0.1:9/v1/messages' }), mailer: smtp, log, clock: new ManualClock() });
    expect(d.via('email')).toBe('smtp');
    expect(d.via('sms')).toBe('sms_gateway');
    expect(await d.deliver(email('553120'))).toEqual({ via: 'smtp', ref: '<m1@bank.example>' });
    expect(sent.at(-1)!.text).toContain('Code: 553120');
    expect(d.outbox.messages).toHaveLength(0);
    expect(text()).toBe('');
  });

  it('is never used in production: a method without a transport is unavailable', async () => {
    const { log, text } = capture();
    const d = new OtpDelivery({ config: config({}, false), mailer: disabledMailer, log, clock: new ManualClock() });
    expect(d.via('email')).toBeNull();
    expect(d.via('sms')).toBeNull();
    await expect(d.deliver(email('118822'))).rejects.toBeInstanceOf(DeliveryFailure);
    expect(d.outbox.messages).toHaveLength(0);
    expect(text()).toBe('');
  });

  it('turns a mail server refusal into a DeliveryFailure carrying the mailer\'s safe reason', async () => {
    const refusing: Mailer = { configured: true, send: () => Promise.reject(new MailDeliveryError('EENVELOPE SMTP 550 during RCPT')) };
    const d = new OtpDelivery({ config: config(), mailer: refusing, log: pino({ level: 'silent' }), clock: new ManualClock() });
    const err = await d.deliver(email('000000')).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryFailure);
    expect(err).toMatchObject({ via: 'smtp', reason: 'EENVELOPE SMTP 550 during RCPT' });
  });
});
