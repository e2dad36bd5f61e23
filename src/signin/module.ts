/**
 * The one sign-in pipeline (ARCHITECTURE 4) and its routes: every strategy and channel goes
 * through identify -> access policy -> second factor -> tokens + session -> audit. The access
 * policy and second-factor steps are what earlier modules provide (`accessPolicy`,
 * `secondFactor`); strategies are built here from the same dependencies.
 */
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Module } from '../platform/module.js';
import { SignInPipeline, type PipelineDeps } from './pipeline.js';
import { channelRoutes } from './channel-routes.js';
import { RefreshService } from './refresh.js';
import { signinRoutes, type SigninRouteDeps } from './routes.js';
import { LocalStrategy, type LocalStrategyDeps } from './strategies/local.js';

/** What the pipeline, the local strategy and the routes use, less what this module builds. */
export type SigninDeps = Omit<PipelineDeps, 'subCipher'> & LocalStrategyDeps & Omit<SigninRouteDeps, keyof SigninProvides> & {
  keys: KeyMaterial;
};

export interface SigninProvides {
  pipeline: SignInPipeline;
  /** The username-or-email and password strategy. */
  local: LocalStrategy;
  refresh: RefreshService;
}

export function signinModule(deps: SigninDeps): Module<SigninProvides> {
  const { db, clock } = deps;
  const pipeline = new SignInPipeline({ ...deps, subCipher: deps.keys.cipher('token-sub') });
  const local = new LocalStrategy(deps);
  const refresh = new RefreshService({ db, clock, tokens: deps.tokens, sessions: deps.sessions, users: deps.users, audit: deps.audit, pipeline, accessPolicy: deps.accessPolicy });
  return {
    name: 'signin',
    provides: { pipeline, local, refresh },
    routes: async (instance) => {
      const routeDeps = { ...deps, pipeline, local, refresh };
      await instance.register(signinRoutes(routeDeps));
      await instance.register(channelRoutes(routeDeps));
    },
    jobs: [{ name: 'refresh token clean-up', everyMs: 10 * 60_000, scope: 'one-node', run: () => refresh.purgeExpired() }],
  };
}
