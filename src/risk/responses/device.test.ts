import { describe, expect, it } from 'vitest';
import { describeDevice } from './device.js';

describe('the device a notice names', () => {
  it('names the browser and the system, never a version', () => {
    const cases: [string, { browser: string | null; system: string | null }][] = [
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', { browser: 'Chrome', system: 'Windows' }],
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51', { browser: 'Edge', system: 'Windows' }],
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', { browser: 'Safari', system: 'iPhone' }],
      ['Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36', { browser: 'Samsung Internet', system: 'Android' }],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0', { browser: 'Firefox', system: 'macOS' }],
      ['okhttp/4.12.0', { browser: null, system: null }],
      ['', { browser: null, system: null }],
      ['lightmyrequest', { browser: null, system: null }],
    ];
    for (const [ua, expected] of cases) expect(describeDevice(ua), ua).toEqual(expected);
  });
});
