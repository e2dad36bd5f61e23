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

  it('a right password the response policy refused: says so, that the password is known to someone else and to change it, in every language', () => {
    const refused: SignInNotice = { ...base, kind: 'refused' };
    const en = signInNoticeMail('a@bank.example', refused);
    expect(en.subject).toBe('A sign-in with your password was refused');
    expect(en.text).toContain('Someone gave the right password of your account (amina.otieno) in a way that does not match your usual sign-ins, and the sign-in was refused. Unless this was you, your password is known to someone else: change it now, in the app or through the bank\'s account recovery.');
    expect(en.text).toContain('Where: Lisbon, Portugal');
    expect(en.text).toContain('open this link now: https://auth.bank.example/security/not-me#rnm_x');
    expect(signInNoticeSms(refused)).toBe('Bank: a sign-in with your password from Lisbon, Portugal on 2026-12-07 09:20 UTC was refused. Not you? Change your password: see our email.');
    expect(signInNoticeSms({ ...refused, notMeLink: undefined })).toBe('Bank: a sign-in with your password from Lisbon, Portugal on 2026-12-07 09:20 UTC was refused. Not you? Change your password or call the bank.');
    expect(signInNoticePush(refused)).toEqual({ title: 'A sign-in with your password was refused', body: signInNoticeSms(refused) });

    const pt = signInNoticeMail('a@bank.example', { ...refused, language: 'pt' });
    expect(pt.subject).toBe('Foi recusado um acesso com a sua palavra-passe');
    expect(pt.text).toContain('Alguém indicou a palavra-passe certa da sua conta (amina.otieno) de uma forma que não corresponde aos seus acessos habituais, e o acesso foi recusado. A não ser que tenha sido você, a sua palavra-passe é conhecida por outra pessoa: altere-a já, na aplicação ou através da recuperação de conta do banco.');
    // The SMS loses the accents outside GSM-7 (ê, ã); the push keeps them.
    expect(signInNoticeSms({ ...refused, language: 'pt' })).toBe('Banco: acesso recusado com a sua palavra-passe, de Lisbon, Portugal em 2026-12-07 09:20 UTC. Nao foi voce? Altere-a: veja o email.');
    expect(signInNoticePush({ ...refused, language: 'pt', notMeLink: undefined })).toEqual({
      title: 'Foi recusado um acesso com a sua palavra-passe',
      body: 'Banco: acesso recusado com a sua palavra-passe, de Lisbon, Portugal em 2026-12-07 09:20 UTC. Não foi você? Altere-a ou ligue ao banco.',
    });

    const fr = signInNoticeMail('a@bank.example', { ...refused, language: 'fr', notMeLink: undefined });
    expect(fr.subject).toBe('Une connexion avec votre mot de passe a été refusée');
    expect(fr.text).toContain('Quelqu\'un a donné le bon mot de passe de votre compte (amina.otieno) d\'une manière qui ne correspond pas à vos connexions habituelles, et la connexion a été refusée. Sauf si c\'était vous, votre mot de passe est connu de quelqu\'un d\'autre : changez-le dès maintenant, dans l\'application ou par la récupération de compte de la banque.');
    expect(fr.text).toContain('appelez immédiatement la banque');
    expect(fr.text).not.toContain('http');
    expect(signInNoticeSms({ ...refused, language: 'fr', notMeLink: undefined })).toBe('Banque : connexion refusée avec votre mot de passe depuis Lisbon, Portugal le 2026-12-07 09:20 UTC. Pas vous ? Changez-le ou appelez la banque.');
    expect(signInNoticeSms({ ...refused, language: 'fr' })).toBe('Banque : connexion refusée avec votre mot de passe depuis Lisbon, Portugal le 2026-12-07 09:20 UTC. Pas vous ? Changez-le : voir l\'e-mail.');
  });

  it('an unknown place and an unrecognised device are said so', () => {
    const m = signInNoticeMail('a@bank.example', { ...base, country: null, city: null, device: { browser: null, system: null } });
    expect(m.text).toContain('Where: unknown\nDevice: not recognised');
  });
});
