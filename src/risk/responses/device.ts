/**
 * A short description of the device a sign-in came from, read from its User-Agent ("Chrome on
 * Windows", "Safari on iPhone"), for the notice to the account holder. Only the browser's and the
 * system's names: no version, no build, nothing that would make the notice a fingerprint. A
 * User-Agent is whatever the client says; the notice presents it as such ("a device that
 * presented itself as ...").
 */

export interface DeviceDescription {
  browser: string | null;
  system: string | null;
}

/** First match wins: the order matters (Edge and Opera also say Chrome; Chrome also says Safari). */
const BROWSERS: readonly [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'], [/\b(?:OPR|Opera)\//, 'Opera'], [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'], [/\b(?:Chrome|CriOS)\//, 'Chrome'], [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

const SYSTEMS: readonly [RegExp, string][] = [
  [/\biPhone\b/, 'iPhone'], [/\biPad\b/, 'iPad'], [/\bAndroid\b/, 'Android'], [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'], [/\bMac OS X\b|\bMacintosh\b/, 'macOS'], [/\bLinux\b/, 'Linux'],
];

const first = (table: readonly [RegExp, string][], ua: string): string | null => table.find(([re]) => re.test(ua))?.[1] ?? null;

/** What the User-Agent names; both null when it names nothing known (or is empty). */
export function describeDevice(userAgent: string): DeviceDescription {
  const ua = userAgent.slice(0, 512);
  return { browser: first(BROWSERS, ua), system: first(SYSTEMS, ua) };
}
