import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../platform/config.js';
import {
  DEFAULT_MATRIX_SETTINGS, isMet, knowledgeUnlocked, liveAlternatives, parseAlternatives, POSSESSION_PROOFS, proofsOf, readRecoveryMatrix,
  RECOVERY_KINDS, SELF_PROOFS, stillNeeded, type Proof,
} from './matrix.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig({ NODE_ENV: 'test', ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('the recovery matrix settings', () => {
  it('the defaults parse, and each of their alternatives keeps every rule', () => {
    const problems: string[] = [];
    const m = readRecoveryMatrix(() => undefined, problems);
    expect(problems).toEqual([]);
    expect(m.password).toHaveLength(7);
    expect(m.password).not.toContainEqual(['pin', 'sms_code']); // a shoulder-surfed PIN and a swapped SIM fall together
    expect(m.password[0]).toEqual(['email_code', 'sms_code']);
    expect(m.pin).toEqual([['sms_code', 'password'], ['email_code', 'password']]); // never a SIM and answers alone
    expect(m.mfa).toEqual([['password', 'email_code', 'security_questions'], ['password', 'branch_approval']]);
    expect(m.device).toEqual([['password', 'branch_approval']]);
    for (const kind of RECOVERY_KINDS) {
      for (const alt of m[kind]) {
        expect(new Set(alt).size, `${kind}: ${alt.join('+')}`).toBeGreaterThanOrEqual(2);
        expect(alt.some((p) => POSSESSION_PROOFS.has(p)), `${kind}: ${alt.join('+')}`).toBe(true);
        expect(alt.filter((p) => SELF_PROOFS[kind].includes(p)), `${kind}: ${alt.join('+')}`).toEqual([]);
      }
    }
  });

  it('threat: a SIM-swapped phone alone never suffices: every default alternative with sms_code holds another proof, and lost factors never trust the phone', () => {
    const m = readRecoveryMatrix(() => undefined, []);
    for (const kind of RECOVERY_KINDS) for (const alt of m[kind].filter((a) => a.includes('sms_code'))) expect(alt.length).toBeGreaterThanOrEqual(2);
    expect(proofsOf(m.mfa)).not.toContain('sms_code');
    for (const kind of RECOVERY_KINDS) expect(isMet(m[kind], new Set<Proof>(['sms_code']))).toBe(false);
  });

  it('reads a setting: spaces ignored, proofs in the order written', () => {
    expect(parseAlternatives('password', ' sms_code + email_code | totp+sms_code ')).toEqual({ alternatives: [['sms_code', 'email_code'], ['totp', 'sms_code']], problems: [] });
  });

  it.each([
    ['RECOVERY_PROOFS_PASSWORD', 'email_code', /RECOVERY_PROOFS_PASSWORD: alternative 1 \("email_code"\) must hold at least 2 different proofs/],
    ['RECOVERY_PROOFS_PASSWORD', 'email_code+email_code', /RECOVERY_PROOFS_PASSWORD: alternative 1 .* names a proof twice/],
    ['RECOVERY_PROOFS_PIN', 'password+security_questions', /RECOVERY_PROOFS_PIN: alternative 1 .* must hold a possession proof/],
    ['RECOVERY_PROOFS_PASSWORD', 'email_code+sms_code|password+email_code', /RECOVERY_PROOFS_PASSWORD: alternative 2 .* proves the lost password with password/],
    ['RECOVERY_PROOFS_PIN', 'sms_code+pin', /RECOVERY_PROOFS_PIN: alternative 1 .* proves the lost pin with pin/],
    ['RECOVERY_PROOFS_MFA', 'totp+password', /RECOVERY_PROOFS_MFA: alternative 1 .* proves the lost mfa with totp/],
    ['RECOVERY_PROOFS_MFA', 'backup_code+email_code', /RECOVERY_PROOFS_MFA: alternative 1 .* proves the lost mfa with backup_code/],
    ['RECOVERY_PROOFS_DEVICE', 'password+carrier_pigeon', /RECOVERY_PROOFS_DEVICE: alternative 1 .* names "carrier_pigeon", not a proof/],
    ['RECOVERY_PROOFS_DEVICE', ' ', /RECOVERY_PROOFS_DEVICE must name at least one alternative/],
  ])('refuses %s=%s at start-up, naming the variable', (name, value, expected) => {
    const problems = problemsOf({ [name]: value });
    expect(problems.some((p) => expected.test(p)), problems.join('\n')).toBe(true);
  });

  it('every default setting loads through the configuration, and RECOVERY_TTL_MINUTES is bounded', () => {
    const c = loadConfig({ NODE_ENV: 'test', ...Object.fromEntries(RECOVERY_KINDS.map((k) => [`RECOVERY_PROOFS_${k.toUpperCase()}`, DEFAULT_MATRIX_SETTINGS[k]])) });
    expect(c.recovery.ttlMinutes).toBe(30);
    expect(c.recovery.matrix.pin).toHaveLength(2);
    expect(problemsOf({ RECOVERY_TTL_MINUTES: '1' }).some((p) => p.startsWith('RECOVERY_TTL_MINUTES'))).toBe(true);
  });
});

describe('the matrix rules', () => {
  const pin = readRecoveryMatrix(() => undefined, []).pin; // sms+password | email+password

  it('an alternative is met only when every one of its proofs is given', () => {
    expect(isMet(pin, new Set<Proof>(['sms_code']))).toBe(false);
    expect(isMet(pin, new Set<Proof>(['sms_code', 'email_code']))).toBe(false);
    expect(isMet(pin, new Set<Proof>(['email_code', 'password']))).toBe(true);
  });

  it('a locked proof kills the alternatives that need it, unless it was given', () => {
    expect(liveAlternatives(pin, new Set(), new Set<Proof>(['sms_code']))).toEqual([['email_code', 'password']]);
    expect(liveAlternatives(pin, new Set(), new Set<Proof>(['sms_code', 'password']))).toEqual([]);
    expect(liveAlternatives(pin, new Set<Proof>(['password']), new Set<Proof>(['sms_code']))).toEqual([['email_code', 'password']]);
  });

  it('counts the fewest proofs still needed over the live alternatives', () => {
    expect(stillNeeded(pin, new Set())).toBe(2);
    expect(stillNeeded(pin, new Set<Proof>(['sms_code']))).toBe(1);
    expect(stillNeeded(pin, new Set<Proof>(['sms_code', 'password']))).toBe(0);
  });

  it('threat: knowledge is never checked for someone who holds nothing: a knowledge proof waits for a possession proof of its own alternative', () => {
    expect(knowledgeUnlocked(pin, 'password', new Set())).toBe(false);
    expect(knowledgeUnlocked(pin, 'password', new Set<Proof>(['sms_code']))).toBe(true);
    expect(knowledgeUnlocked(pin, 'password', new Set<Proof>(['email_code']))).toBe(true);
    expect(knowledgeUnlocked(pin, 'sms_code', new Set())).toBe(true);
  });
});

describe('RECOVERY_SECURITY_QUESTIONS', () => {
  it('is 2 by default, may be 3, and anything else stops start-up naming the setting', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).recovery.securityQuestions).toBe(2);
    expect(loadConfig({ NODE_ENV: 'test', RECOVERY_SECURITY_QUESTIONS: '3' }).recovery.securityQuestions).toBe(3);
    for (const bad of ['1', '4', 'two', '2.5']) {
      expect(problemsOf({ RECOVERY_SECURITY_QUESTIONS: bad })).toEqual([expect.stringMatching(/^RECOVERY_SECURITY_QUESTIONS must be 2 or 3 .*not "/)]);
    }
  });
});
