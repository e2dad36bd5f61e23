import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { ManualClock } from '../platform/clock.js';
import { loadConfig } from '../platform/config.js';
import { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { PriorSignIns } from './profile.js';
import { RiskService } from './service.js';

const config = loadConfig({ NODE_ENV: 'test' });
const client = { ip: '41.90.1.1', ipHash: 'ip-hash', networkHash: 'net-hash', fingerprint: 'phone-1', channel: 'web' };
const none: PriorSignIns = Object.freeze({ profile: null, failedPasswords: 0, failedSecondFactors: 0, failingAccounts: 0 });

function service(breached?: (password: string) => boolean): RiskService {
  return new RiskService({
    db: {} as Db, clock: new ManualClock(Date.UTC(2026, 11, 7, 9)), config, hasher: new Hasher(Buffer.alloc(32, 7)), log: pino({ level: 'silent' }),
    geo: { lookup: (ip) => (ip.startsWith('41.90.') ? { country: 'KE', asn: 33771 } : null) },
    ...(breached ? { breachedPasswords: { isBreached: breached } } : {}),
  });
}

describe('the breached-password hook', () => {
  it('a right password found in the corpus raises breached_password (30), with nothing about the password', () => {
    const risk = service((p) => p === 'Password1!').assess(none, client, 'Password1!');
    expect(risk).toEqual({ score: 30, indicators: [{ signal: 'breached_password', weight: 30, details: {} }], location: { country: 'KE', asn: 33771 } });
  });

  it('not in the corpus, no password to ask about (a second step), or no corpus: not raised', () => {
    expect(service(() => false).assess(none, client, 'Password1!').indicators).toEqual([]);
    expect(service(() => true).assess(none, client).indicators).toEqual([]);
    expect(service().assess(none, client, 'Password1!').indicators).toEqual([]);
  });
});

describe('a gateway\'s address (USSD)', () => {
  it('is no place of the subscriber: no location, so no location signal', () => {
    const profile = { successCount: 5, devices: [], countries: { PT: 5 }, asns: [3243], hours: Array(24).fill(0), lastAt: null, lastLocated: { at: Date.UTC(2026, 11, 7, 8, 50), country: 'PT', latitude: null, longitude: null, accuracyKm: null } };
    const prior = { ...none, profile };
    expect(service().assess(prior, { ...client, fingerprint: '' }).indicators.map((i) => i.signal)).toEqual(['new_country', 'new_network', 'country_hop']);
    expect(service().assess(prior, { ...client, fingerprint: '', channel: 'ussd' })).toEqual({ score: 0, indicators: [], location: null });
  });
});

describe('listeners', () => {
  it('hear only assessments that raised something, in the order they were added', async () => {
    const s = service();
    const heard: string[] = [];
    s.onAssessed(async (e) => void heard.push(`a:${e.outcome}:${e.assessment.score}`));
    s.onAssessed(async (e) => void heard.push(`b:${e.user?.username ?? 'none'}:${e.auditId}`));
    const user = { id: 7, uuid: 'u-7', username: 'amina' };
    await s.announce('signed_in', { score: 0, indicators: [], location: null }, user, client, 'audit-1', {} as Db);
    await s.announce('failed', { score: 20, indicators: [{ signal: 'failed_passwords', weight: 20, details: {} }], location: null }, null, client, null, {} as Db);
    expect(heard).toEqual(['a:failed:20', 'b:none:null']);
  });
});
