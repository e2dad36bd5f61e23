import { describe, expect, it } from 'vitest';
import type { RiskIndicator, RiskSignal } from '../types.js';
import { AddressBlocks, MAX_BLOCKS } from './address-blocks.js';
import { decide, defaultPolicy, policyProblems, type RiskPolicy, type RiskRule } from './policy.js';

const ind = (signal: RiskSignal, weight = 10): RiskIndicator => ({ signal, weight, details: {} });
const risk = (score: number, ...signals: RiskSignal[]) => ({ score, indicators: signals.length > 0 ? signals.map((s) => ind(s)) : [ind('new_device', score)] });
const rule = (action: RiskRule['action'], r: Partial<RiskRule> = {}): RiskRule => ({ action, channels: [], min_score: null, signals: [], ...r });
const policy = (...rules: RiskRule[]): RiskPolicy => ({ rules, account_lock_minutes: 30, address_block_minutes: 15 });

describe('decide', () => {
  it('no indicator, or no rule that applies: allow', () => {
    const p = policy(rule('refuse', { min_score: 50 }));
    expect(decide(p, { score: 0, indicators: [] }, 'web')).toEqual({ answer: 'allow', blockAddress: false, rules: [] });
    expect(decide(p, risk(49), 'web').answer).toBe('allow');
  });

  it('a rule applies at its score or on any of its signals, either sufficing', () => {
    const p = policy(rule('step_up', { min_score: 40, signals: ['country_hop'] }));
    expect(decide(p, risk(40), 'web')).toEqual({ answer: 'step_up', blockAddress: false, rules: [0] });
    expect(decide(p, risk(30, 'country_hop'), 'web').answer).toBe('step_up');
    expect(decide(p, risk(39, 'new_country'), 'web').answer).toBe('allow');
  });

  it('a rule naming channels covers only those', () => {
    const p = policy(rule('refuse', { channels: ['ussd'], min_score: 10 }));
    expect(decide(p, risk(50), 'ussd').answer).toBe('refuse');
    expect(decide(p, risk(50), 'web').answer).toBe('allow');
  });

  it('every applying rule acts; the strongest answer wins (lock, refuse, step-up); a block is a side effect', () => {
    const p = policy(rule('step_up', { min_score: 10 }), rule('block_address', { signals: ['address_failing_many_accounts'] }), rule('refuse', { min_score: 60 }), rule('lock_account', { min_score: 90 }));
    expect(decide(p, risk(70, 'address_failing_many_accounts'), 'web')).toEqual({ answer: 'refuse', blockAddress: true, rules: [0, 1, 2] });
    expect(decide(p, risk(95), 'web')).toEqual({ answer: 'lock_account', blockAddress: false, rules: [0, 2, 3] });
  });

  it('threat: one wrong password locks an account through a policy rule — a wrong password can only block its network, never lock', () => {
    const p = policy(rule('step_up', { min_score: 10 }), rule('refuse', { min_score: 10 }), rule('block_address', { signals: ['address_failing_many_accounts'] }), rule('lock_account', { signals: ['failed_passwords'] }));
    expect(decide(p, risk(35, 'address_failing_many_accounts'), 'web', true)).toEqual({ answer: 'allow', blockAddress: true, rules: [2] });
    expect(decide(p, risk(20, 'failed_passwords'), 'web', true)).toEqual({ answer: 'allow', blockAddress: false, rules: [] });
    expect(decide(p, risk(20, 'failed_passwords'), 'web').answer).toBe('lock_account');
  });
});

describe('the defaults', () => {
  it('step up at RISK_STEP_UP_SCORE or on travel; refuse only when RISK_REFUSE_SCORE is set; block stuffing unless RISK_ADDRESS_BLOCK_MINUTES is 0', () => {
    expect(defaultPolicy({ stepUpScore: 40, refuseScore: null, addressBlockMinutes: 15, accountLockMinutes: 30 })).toEqual({
      rules: [rule('step_up', { min_score: 40, signals: ['impossible_travel', 'country_hop'] }), rule('block_address', { signals: ['address_failing_many_accounts'] })],
      account_lock_minutes: 30, address_block_minutes: 15,
    });
    const strict = defaultPolicy({ stepUpScore: 30, refuseScore: 80, addressBlockMinutes: 0, accountLockMinutes: 60 });
    expect(strict.rules.map((r) => [r.action, r.min_score])).toEqual([['step_up', 30], ['refuse', 80]]);
  });

  it('a rule that would never apply, or names an unknown channel, is a problem naming it', () => {
    expect(policyProblems(policy(rule('refuse'), rule('step_up', { min_score: 5, channels: ['fax' as never] })))).toEqual([
      { field: 'rules[0]', message: 'applies never: give min_score, signals, or both' },
      { field: 'rules[1].channels', message: 'names no channel: fax (the channels are web, mobile, ussd, agent)' },
    ]);
  });
});

describe('address blocks', () => {
  it('block until a time; a later block extends it; past it, the network is free', () => {
    const b = new AddressBlocks();
    expect(b.block('n1', 1_000, 0)).toBe(true);
    expect(b.blockedUntil('n1', 999)).toBe(1_000);
    expect(b.block('n1', 2_000, 500)).toBe(false);
    expect(b.blockedUntil('n1', 1_500)).toBe(2_000);
    expect(b.blockedUntil('n1', 2_000)).toBeNull();
    expect(b.size).toBe(0);
  });

  it('holds at most MAX_BLOCKS networks: an ended block, else the one that ends first, makes room', () => {
    const b = new AddressBlocks();
    for (let i = 0; i < MAX_BLOCKS; i++) b.block(`n${i}`, 10_000 + i, 0);
    b.block('newcomer', 50_000, 0);
    expect(b.size).toBe(MAX_BLOCKS);
    expect(b.blockedUntil('n0', 1)).toBeNull();
    expect(b.blockedUntil('n1', 1)).toBe(10_001);
    expect(b.blockedUntil('newcomer', 1)).toBe(50_000);
  });
});
