import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS, parseRateRule, readRateLimits } from './config-rate-limits.js';
import { loadConfig } from './config.js';

describe('rate limit settings', () => {
  it('reads <count>/<window> in seconds, minutes and hours, and off', () => {
    expect(parseRateRule('30/1m')).toEqual({ limit: 30, windowSec: 60 });
    expect(parseRateRule('5/15m')).toEqual({ limit: 5, windowSec: 900 });
    expect(parseRateRule('600/1h')).toEqual({ limit: 600, windowSec: 3600 });
    expect(parseRateRule('10/30s')).toEqual({ limit: 10, windowSec: 30 });
    expect(parseRateRule('OFF')).toBeNull();
  });

  it('explains what is wrong with a bad value', () => {
    for (const bad of ['30', '30/m', '0/1m', '30/0s', '30/25h', '-1/1m', '1e3/1m', '30 per minute']) expect(typeof parseRateRule(bad), bad).toBe('string');
  });

  it('starts from the defaults; SIGNIN_RATE_LIMIT_PER_MINUTE sets the sign-in limit per address and RATE_LIMIT_SIGNIN_IP overrides it', () => {
    const problems: string[] = [];
    const env: Record<string, string> = { RATE_LIMIT_RECOVERY_ACCOUNT: '3/1h', RATE_LIMIT_TOKEN_IP: 'off' };
    const limits = readRateLimits((n) => env[n], 45, problems);
    expect(problems).toEqual([]);
    expect(limits.signin.ip).toEqual({ limit: 45, windowSec: 60 });
    expect(limits.signin.account).toEqual(DEFAULT_RATE_LIMITS.signin.account);
    expect(limits.recovery.account).toEqual({ limit: 3, windowSec: 3600 });
    expect(limits.token.ip).toBeNull();
    expect(readRateLimits((n) => ({ RATE_LIMIT_SIGNIN_IP: '7/1m' })[n], 45, problems).signin.ip).toEqual({ limit: 7, windowSec: 60 });
  });

  it('a bad value stops start-up with the variable named', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', RATE_LIMIT_USSD_ACCOUNT: 'lots' })).toThrow(/RATE_LIMIT_USSD_ACCOUNT must be <count>\/<window>.*got "lots"/);
  });
});
