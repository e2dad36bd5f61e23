import { describe, expect, it } from 'vitest';
import { RISK_SIGNALS } from '../risk/types.js';
import { DEFAULT_ALERT_SIGNALS, DEFAULT_RISK_WEIGHTS, parseRiskWeights } from './config-risk.js';
import { ConfigError, loadConfig } from './config.js';

function weights(raw: string | undefined) {
  const problems: string[] = [];
  return { weights: parseRiskWeights(raw, problems), problems };
}

/** The problem start-up reports for `env`, or null when it starts. */
function startProblem(env: Record<string, string>): string | null {
  try {
    loadConfig({ NODE_ENV: 'test', ...env });
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

describe('risk settings', () => {
  it('defaults: every signal weighed, evaluation on, the documented bounds', () => {
    expect(Object.keys(DEFAULT_RISK_WEIGHTS).sort()).toEqual([...RISK_SIGNALS].sort());
    expect(loadConfig({ NODE_ENV: 'test' }).risk).toEqual({
      enabled: true, weights: DEFAULT_RISK_WEIGHTS, maxTravelKmh: 1000, usualCountrySignins: 3, failedPasswords: 5,
      failedSecondFactors: 3, stuffingAccounts: 20, windowMinutes: 15, hourHistory: 20,
      responses: { alertScore: 50, alertSignals: DEFAULT_ALERT_SIGNALS, notifyScore: 40, notMeUrl: undefined, notMeDays: 7, stepUpScore: 40, refuseScore: null, addressBlockMinutes: 15, accountLockMinutes: 30 },
    });
  });

  it('RISK_WEIGHTS changes the weights it names and keeps the others', () => {
    const r = weights(' new_device=0, impossible_travel = 60 ,breached_password=100');
    expect(r.problems).toEqual([]);
    expect(r.weights).toEqual({ ...DEFAULT_RISK_WEIGHTS, new_device: 0, impossible_travel: 60, breached_password: 100 });
  });

  it('a key that is no signal is refused by name, with the list of signals', () => {
    expect(weights('new_devise=10').problems).toEqual([`RISK_WEIGHTS: "new_devise" is not a risk signal; the signals are ${RISK_SIGNALS.join(', ')}`]);
  });

  it('a weight outside 0 to 100, or not a number, is refused naming the signal', () => {
    expect(weights('new_country=101').problems).toEqual(['RISK_WEIGHTS: new_country must be a whole number from 0 (off) to 100, as in new_country=25 (got "new_country=101")']);
    expect(weights('new_country=high').problems).toEqual(['RISK_WEIGHTS: new_country must be a whole number from 0 (off) to 100, as in new_country=25 (got "new_country=high")']);
    expect(weights('new_country').problems).toEqual(['RISK_WEIGHTS: new_country must be a whole number from 0 (off) to 100, as in new_country=25 (got "new_country")']);
    expect(weights('new_country=1,new_country=2').problems).toEqual(['RISK_WEIGHTS: new_country is given twice']);
  });

  it('start-up stops on a bad weight, naming the setting and the key', () => {
    expect(startProblem({ RISK_WEIGHTS: 'new_device=10,velocity=50' })).toContain('RISK_WEIGHTS: "velocity" is not a risk signal');
    expect(startProblem({ RISK_MAX_TRAVEL_KMH: '50' })).toContain('RISK_MAX_TRAVEL_KMH');
    expect(startProblem({ RISK_EVALUATION: '0', RISK_STUFFING_ACCOUNTS: '50' })).toBeNull();
    expect(loadConfig({ NODE_ENV: 'test', RISK_EVALUATION: '0' }).risk.enabled).toBe(false);
  });

  it('the responses\' settings: scores, the signals that alone alert, the "this was not me" address and its days', () => {
    const r = loadConfig({ NODE_ENV: 'test', RISK_ALERT_SCORE: '70', RISK_ALERT_SIGNALS: 'impossible_travel, failed_passwords', RISK_NOTIFY_SCORE: '30', RISK_NOT_ME_URL: 'https://auth.bank.example/security/not-me', RISK_NOT_ME_DAYS: '3' }).risk.responses;
    expect(r).toEqual({ alertScore: 70, alertSignals: ['impossible_travel', 'failed_passwords'], notifyScore: 30, notMeUrl: 'https://auth.bank.example/security/not-me', notMeDays: 3, stepUpScore: 40, refuseScore: null, addressBlockMinutes: 15, accountLockMinutes: 30 });
    expect(loadConfig({ NODE_ENV: 'test', RISK_ALERT_SIGNALS: 'none' }).risk.responses.alertSignals).toEqual([]);
    expect(startProblem({ RISK_ALERT_SIGNALS: 'impossible_travel,velocity' })).toContain('RISK_ALERT_SIGNALS: "velocity" is not a risk signal');
    expect(startProblem({ RISK_NOT_ME_URL: 'https://auth.bank.example/security/not-me#x' })).toContain('RISK_NOT_ME_URL must be an http(s) address without credentials, query or fragment');
    expect(startProblem({ RISK_NOT_ME_URL: 'not a url' })).toContain('RISK_NOT_ME_URL must be an absolute address');
    expect(startProblem({ RISK_ALERT_SCORE: '0' })).toContain('RISK_ALERT_SCORE');
    expect(startProblem({ RISK_NOT_ME_DAYS: '31' })).toContain('RISK_NOT_ME_DAYS');
  });

  it('the response policy\'s defaults: the step-up and refusal scores, the address block (0: never) and the account lock', () => {
    const r = loadConfig({ NODE_ENV: 'test', RISK_STEP_UP_SCORE: '60', RISK_REFUSE_SCORE: '90', RISK_ADDRESS_BLOCK_MINUTES: '0', RISK_ACCOUNT_LOCK_MINUTES: '120' }).risk.responses;
    expect(r).toMatchObject({ stepUpScore: 60, refuseScore: 90, addressBlockMinutes: 0, accountLockMinutes: 120 });
    expect(startProblem({ RISK_REFUSE_SCORE: '101' })).toContain('RISK_REFUSE_SCORE');
    expect(startProblem({ RISK_STEP_UP_SCORE: '0' })).toContain('RISK_STEP_UP_SCORE');
    expect(startProblem({ RISK_ADDRESS_BLOCK_MINUTES: '-1' })).toContain('RISK_ADDRESS_BLOCK_MINUTES');
  });
});
