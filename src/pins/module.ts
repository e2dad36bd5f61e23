/**
 * PINs and USSD sign-in (issue 10, section 1): the PIN credential (its rules, history, attempt
 * counter and lockout), the USSD gateways' keys, the PIN strategy of the one sign-in pipeline,
 * and their routes: set or change a PIN signed in, set one with a reset token, sign in and
 * change the PIN through a USSD gateway, and the administrator's PIN reset.
 */
import type { Logger } from 'pino';
import type { Mailer } from '../mail/mailer.js';
import { BackgroundWork } from '../platform/background.js';
import type { Config } from '../platform/config.js';
import type { Module } from '../platform/module.js';
import type { Clock } from '../platform/clock.js';
import { UssdGateways } from './gateway.js';
import { PinResetNotifier } from './notices.js';
import { pinRoutes, type PinRouteDeps } from './routes.js';
import { PinService } from './service.js';
import { PinStrategy } from './strategy.js';

/** What the routes use, less what this module builds, and what its services need besides. */
export type PinsDeps = Omit<PinRouteDeps, keyof PinsProvides | 'gateways' | 'config'> & {
  clock: Clock;
  config: Pick<Config, 'signin' | 'rateLimits' | 'tokens' | 'ussd' | 'mfa' | 'sms'>;
  mailer: Mailer;
  log: Logger;
};

export interface PinsProvides {
  pins: PinService;
  /** The phone-number-and-PIN strategy (USSD). */
  pinStrategy: PinStrategy;
  /** Tells the customer, on every contact, that the bank reset their PIN (notices.ts). */
  pinResetNotices: PinResetNotifier;
}

export function pinsModule(deps: PinsDeps): Module<PinsProvides> {
  const pins = new PinService({ db: deps.db, hasher: deps.hasher, clock: deps.clock, attempts: deps.attempts, sessions: deps.sessions });
  const pinStrategy = new PinStrategy({ users: deps.users, pins });
  const gateways = new UssdGateways(deps.config.ussd.gateways);
  const pinResetNotices = new PinResetNotifier({ config: deps.config, mailer: deps.mailer, log: deps.log, clock: deps.clock, background: new BackgroundWork() });
  return {
    name: 'pins',
    provides: { pins, pinStrategy, pinResetNotices },
    routes: pinRoutes({ ...deps, pins, pinStrategy, pinResetNotices, gateways }),
    close: () => pinResetNotices.settled(),
  };
}
