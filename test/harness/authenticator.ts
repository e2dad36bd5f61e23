/**
 * A phone authenticator app for tests: it reads the QR code that TOTP setup returns (PNG data
 * URL, decoded with pngjs + jsQR, not by trusting `otpauth_uri`), parses the otpauth URI and
 * shows codes with `otpauth`, as Google Authenticator or Aegis would. Plus the bearer-token
 * enrolment every TOTP suite starts from.
 */
import jsqr from 'jsqr'; // CommonJS: the function is also its `default` property, which is what TypeScript sees
import * as OTPAuth from 'otpauth';
import { PNG } from 'pngjs';
import { expect } from 'vitest';
import type { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { bearer, STRONG_PASSWORD } from './fixtures.js';

/** The text a QR code in a `data:image/png;base64,...` URL holds. */
export function decodeQr(dataUrl: string): string {
  const m = /^data:image\/png;base64,([A-Za-z0-9+/=]+)$/.exec(dataUrl);
  if (!m) throw new Error('not a PNG data URL');
  const png = PNG.sync.read(Buffer.from(m[1]!, 'base64'));
  const found = jsqr.default(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  if (!found) throw new Error('no QR code in the image');
  return found.data;
}

export class Authenticator {
  constructor(readonly totp: OTPAuth.TOTP) {}

  /** Scans a setup answer's QR code. */
  static scan(qrCode: string): Authenticator {
    const parsed = OTPAuth.URI.parse(decodeQr(qrCode));
    if (!(parsed instanceof OTPAuth.TOTP)) throw new Error('not a TOTP URI');
    return new Authenticator(parsed);
  }

  /** Scans a picture of a QR code (a screenshot of the page's drawing of it). */
  static scanPng(png: Buffer): Authenticator {
    return Authenticator.scan(`data:image/png;base64,${png.toString('base64')}`);
  }

  /** The code shown at `timeMs`, or `steps` steps later (negative: earlier). */
  code(timeMs: number, steps = 0): string {
    return this.totp.generate({ timestamp: timeMs + steps * this.totp.period * 1000 });
  }

  /** A 6-digit code that matches no step within `window` of `timeMs`. */
  wrongCode(timeMs: number, window = 1): string {
    const valid = new Set(Array.from({ length: 2 * window + 1 }, (_, i) => this.code(timeMs, i - window)));
    for (let n = 0; ; n++) {
      const candidate = String(n).padStart(6, '0');
      if (!valid.has(candidate)) return candidate;
    }
  }
}

export interface SetupBody {
  secret: string;
  otpauth_uri: string;
  qr_code: string;
  algorithm: string;
  digits: number;
  period: number;
}

/** Setup and verify with a bearer token; the clock then moves one step so the enrolment code is not a replay. */
export async function enrolTotp(app: App, clock: ManualClock, accessToken: string, password = STRONG_PASSWORD): Promise<{ authenticator: Authenticator; backupCodes: string[]; setup: SetupBody }> {
  const setup = await app.inject({ method: 'POST', url: '/api/v1/2fa/totp/setup', headers: bearer(accessToken), payload: { current_password: password } });
  expect(setup.statusCode, setup.body).toBe(200);
  const body = setup.json<SetupBody>();
  const authenticator = Authenticator.scan(body.qr_code);
  const verify = await app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify', headers: bearer(accessToken), payload: { code: authenticator.code(clock.now()) } });
  expect(verify.statusCode, verify.body).toBe(200);
  clock.advance(body.period * 1000);
  return { authenticator, backupCodes: verify.json<{ backup_codes: string[] }>().backup_codes, setup: body };
}
