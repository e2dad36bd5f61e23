/**
 * PINs and USSD sign-in (issue 10, section 1): the PIN credential (its rules, history, attempt
 * counter and lockout), the USSD gateways' keys, the PIN strategy of the one sign-in pipeline,
 * and their routes: set or change a PIN signed in, set one with a reset token, sign in and
 * change the PIN through a USSD gateway, and the administrator's PIN reset.
 */
import type { Config } from '../platform/config.js';
import type { Module } from '../platform/module.js';
import type { Clock } from '../platform/clock.js';
import { UssdGateways } from './gateway.js';
import { pinRoutes, type PinRouteDeps } from './routes.js';
import { PinService } from './service.js';
import { PinStrategy } from './strategy.js';

/** What the routes use, less what this module builds, and what its services need besides. */
export type PinsDeps = Omit<PinRouteDeps, keyof PinsProvides | 'gateways' | 'config'> & {
  clock: Clock;
  config: Pick<Config, 'signin' | 'rateLimits' | 'tokens' | 'ussd'>;
};

export interface PinsProvides {
  pins: PinService;
  /** The phone-number-and-PIN strategy (USSD). */
  pinStrategy: PinStrategy;
}

export function pinsModule(deps: PinsDeps): Module<PinsProvides> {
  const pins = new PinService({ db: deps.db, hasher: deps.hasher, clock: deps.clock, attempts: deps.attempts, sessions: deps.sessions });
  const pinStrategy = new PinStrategy({ users: deps.users, pins });
  const gateways = new UssdGateways(deps.config.ussd.gateways);
  return {
    name: 'pins',
    provides: { pins, pinStrategy },
    routes: pinRoutes({ ...deps, pins, pinStrategy, gateways }),
  };
}
