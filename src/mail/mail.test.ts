import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMailer, describeSmtp, disabledMailer, MailDeliveryError, smtpMayBeClear } from './mailer.js';
import { maskEmail, passwordExpiryWarningMail, temporaryPasswordMail } from './templates.js';

describe('mailer', () => {
  it('describes the SMTP server by host and port, never by its credentials', () => {
    expect(describeSmtp('smtp://user:s3cret@mail.bank.example:2525')).toBe('SMTP at mail.bank.example:2525');
    expect(describeSmtp('smtps://user:s3cret@mail.bank.example')).toBe('SMTP at mail.bank.example:465 (TLS)');
    expect(describeSmtp('smtp://mail.bank.example')).toBe('SMTP at mail.bank.example:587');
  });

  it('says when STARTTLS is required (smtp:// with SMTP_REQUIRE_TLS); smtps:// is TLS anyway', () => {
    expect(describeSmtp('smtp://user:s3cret@mail.bank.example', true)).toBe('SMTP at mail.bank.example:587 (STARTTLS required)');
    expect(describeSmtp('smtps://mail.bank.example', true)).toBe('SMTP at mail.bank.example:465 (TLS)');
    expect(smtpMayBeClear('smtp://mail.bank.example', false)).toBe(true);
    expect(smtpMayBeClear('smtp://mail.bank.example', true)).toBe(false);
    expect(smtpMayBeClear('smtps://mail.bank.example', false)).toBe(false);
  });

  it('is disabled without SMTP_URL, and refuses to send', async () => {
    const m = createMailer({ mail: { url: undefined, from: 'x@y.example', requireTls: false } }, pino({ level: 'silent' }));
    expect(m).toBe(disabledMailer);
    expect(m.configured).toBe(false);
    await expect(m.send({ to: 'a@bank.example', subject: 's', text: 't' })).rejects.toBeInstanceOf(MailDeliveryError);
  });
});

describe('templates', () => {
  it('masks an address for the audit trail', () => {
    expect(maskEmail('jane.doe@bank.example')).toBe('j***@bank.example');
    expect(maskEmail('broken')).toBe('***');
  });

  it('puts the temporary password, and no other secret, in its message', () => {
    const m = temporaryPasswordMail({ to: 'jane@bank.example', username: 'jane', fullName: null }, 'Tmp#Pass-1234xyz', 'created');
    expect(m.to).toBe('jane@bank.example');
    expect(m.text).toContain('Dear jane,');
    expect(m.text).toMatch(/^Temporary password: Tmp#Pass-1234xyz$/m);
    expect(m.text).not.toMatch(/https?:\/\//); // no links to follow
  });

  it('counts the days left in the expiry warning', () => {
    const now = Date.UTC(2026, 0, 15, 9);
    const m = passwordExpiryWarningMail({ to: 'a@bank.example', username: 'al', fullName: 'Al Kamau' }, new Date(now + 6 * 86_400_000), now);
    expect(m.subject).toBe('Your password expires in 6 days');
    expect(m.text).toContain('expires on 2026-01-21 09:00 UTC, in 6 days');
    expect(passwordExpiryWarningMail({ to: 'a@b.example', username: 'al', fullName: null }, new Date(now + 3_600_000), now).subject).toBe('Your password expires in 1 day');
  });
});
