/**
 * The responses to a suspicious sign-in (issue 29, section 3, second part): one listener of the
 * risk evaluation raises the security team's alerts and tells the account holder (email, SMS,
 * push) with a one-click "this was not me" that ends every session and locks the account until
 * a recovery; the admission check of the sign-in pipeline (lock.ts) refuses a locked account.
 */
import { BackgroundWork } from '../../platform/background.js';
import type { KeyMaterial } from '../../platform/crypto/key-material.js';
import type { Module } from '../../platform/module.js';
import type { Guard } from '../../sessions/guard.js';
import type { RiskService } from '../service.js';
import { riskResponseRoutes } from './routes.js';
import { RiskResponses, type RiskResponsesDeps } from './service.js';

/** What the service needs, less what this module makes for it (its keys and background work), and what the module wires. */
export interface RiskResponsesModuleDeps extends Omit<RiskResponsesDeps, 'tokenKey' | 'tokenHash' | 'background'> {
  keys: KeyMaterial;
  risk: RiskService;
  guard: Guard;
}

export const RISK_NOTICE_JOB = 'sign-in notice delivery';
export const RISK_NOTICE_PURGE_JOB = 'sign-in notice clean-up';

export function riskResponsesModule(deps: RiskResponsesModuleDeps): Module<{ riskResponses: RiskResponses }> {
  const background = new BackgroundWork();
  const riskResponses = new RiskResponses({
    ...deps, background, tokenKey: deps.keys.hasher('field', 'risk-not-me-token'), tokenHash: deps.keys.hasher('field', 'risk-not-me'),
  });
  deps.risk.onAssessed((event, db) => riskResponses.onAssessed(event, db));
  return {
    name: 'risk-responses',
    provides: { riskResponses },
    tags: [{ name: 'Sign-in notices', description: 'The account holder\'s answer to a notice of a sign-in that did not look like theirs ("this was not me": every session ends, the account is locked until a recovery), and the administrator\'s lift of that lock.' }],
    init: async () => {
      if (deps.config.risk.enabled && deps.config.risk.responses.notMeUrl === undefined) {
        deps.log.info('sign-in notices carry no "this was not me" link (RISK_NOT_ME_URL is unset): they tell the holder to call the bank');
      }
    },
    routes: riskResponseRoutes({ db: deps.db, responses: riskResponses, guard: deps.guard, users: deps.users }),
    jobs: [
      // A catch-up: notices are sent as their sign-in ends; this sends what a stopped node left.
      { name: RISK_NOTICE_JOB, everyMs: 60_000, scope: 'every-node', run: () => riskResponses.sendDue() },
      { name: RISK_NOTICE_PURGE_JOB, everyMs: 60 * 60_000, scope: 'one-node', run: () => riskResponses.purge() },
    ],
    close: () => riskResponses.settled(),
  };
}
