import { describe, expect, it } from 'vitest';
import { signInNoticeMail, signInNoticePush, signInNoticeSms, type SignInNotice } from './notices.js';

const AT = new Date('2026-12-07T09:20:00Z');
const base: SignInNotice = {
  kind: 'signed_in', language: null, username: 'amina.otieno', fullName: 'Amina Otieno', at: AT, country: 'PT', city: 'Lisbon',
  device: { browser: 'Chrome', system: 'Windows' }, channel: 'web', notMeLink: 'https://auth.bank.example/security/not-me#rnm_x',
};

describe('the notice of a suspicious sign-in', () => {
  it('says what happened, when (UTC), where and from what device, with the one-click link; never an address', () => {
    const m = signInNoticeMail('amina@bank.example', base);
    expect(m.subject).toBe('A new sign-in to your account');
    expect(m.text).toContain('Dear Amina Otieno,');
    expect(m.text).toContain('When: 2026-12-07 09:20 (UTC)\nWhere: Lisbon, Portugal\nDevice: Chrome on Windows (as the device described itself)\nChannel: web');
    expect(m.text).toContain('open this link now: https://auth.bank.example/security/not-me#rnm_x');
    expect(signInNoticeSms(base)).toBe('Bank: new sign-in to your account from Lisbon, Portugal on 2026-12-07 09:20 UTC. Not you? Use the link in our email or call the bank.');
  });

  it('in the holder\'s language, the country named in it; without a link, to call the bank', () => {
    const pt = signInNoticeMail('a@bank.example', { ...base, language: 'pt', kind: 'second_factor_required', notMeLink: undefined });
    expect(pt.text).toContain('Onde: Lisbon, Portugal');
    expect(pt.text).toContain('ligue de imediato para o banco');
    expect(pt.text).not.toContain('http');
    const fr = signInNoticeMail('a@bank.example', { ...base, language: 'fr', country: 'KE', city: null });
    expect(fr.text).toContain('Où: Kenya');
    expect(signInNoticeSms({ ...base, language: 'fr', country: 'KE', city: null, notMeLink: undefined })).toBe('Banque : nouvelle connexion à votre compte depuis Kenya le 2026-12-07 09:20 UTC. Pas vous ? Appelez la banque.');
    expect(signInNoticePush({ ...base, language: 'pt' }).body).toContain('Não foi você?');
  });

  it('an unknown place and an unrecognised device are said so', () => {
    const m = signInNoticeMail('a@bank.example', { ...base, country: null, city: null, device: { browser: null, system: null } });
    expect(m.text).toContain('Where: unknown\nDevice: not recognised');
  });
});
