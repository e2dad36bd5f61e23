/**
 * What the factor routes share: the caller, resolved in `preHandler` (after the transport has
 * decrypted the body, so token errors are sealed like any other) and read back by the handler;
 * the request's audit context; and finishing a sign-in, which hands an encrypted client its
 * session key.
 */
import type { FastifyRequest } from 'fastify';
import { auditContext } from '../audit/service.js';
import { confirmCurrentPassword, type ReauthDeps } from '../credentials/reauth.js';
import type { RateGroup } from '../platform/config-rate-limits.js';
import type { MfaMethod } from '../platform/db/schema.js';
import { CommonErrors } from '../platform/errors.js';
import type { RouteRateLimit } from '../policy/route-limits.js';
import { signedInAccount } from '../sessions/guard.js';
import { TokenErrors } from '../tokens/errors.js';
import { useResponseKey } from '../transport/plugin.js';
import type { UserRow } from '../users/store.js';
import { MfaErrors } from './errors.js';
import { mfaContext, type Actor, type Challenge, type ChallengePurpose, type ChallengeService, type MfaContext } from './challenge.js';
import type { SignInResponse } from '../signin/pipeline.js';

/** How `proveForNewFactor` refuses, for a route description (the step-up bullet is the route's: it names its factor's routes). */
export const NEW_FACTOR_PROOF_ERRORS = [
  '`422 VALIDATION_ERROR`: the account has no second factor yet and `current_password` is missing.',
  '`401 INVALID_CREDENTIALS`: wrong `current_password` (counts toward the account lockout).',
] as const;

export interface RouteActors {
  /** preHandler: a bearer caller, or the sign-in behind the body's `two_factor_token` of one of `purposes`. */
  resolve(purposes: readonly ChallengePurpose[]): (request: FastifyRequest) => Promise<void>;
  actorOf(request: FastifyRequest): Actor;
  /** The 2FA challenge of the caller; 401 TOKEN_MISSING when it came with a bearer token instead. */
  challengeOf(request: FastifyRequest): Challenge;
  /** The audit context; a sign-in's channel is the one its password step used. */
  ctxOf(request: FastifyRequest): MfaContext;
  /** The signed-in user of a bearer-authenticated request. */
  signedInUser(request: FastifyRequest): Promise<UserRow>;
  /**
   * A signed-in caller (bearer) confirms `password` before an enrolment a stolen access token
   * alone must not make (422 VALIDATION_ERROR without it, 401 INVALID_CREDENTIALS and the
   * account lockout when wrong). A caller with a 2FA token has just given the password: no-op.
   */
  reauthenticate(request: FastifyRequest, password: string | undefined, action: string): Promise<void>;
  /**
   * A signed-in caller adding or replacing a factor proves more than the session: with no factor
   * `enrolled`, the current `password` (as `reauthenticate`); with some, a recent step-up with one
   * of them (403 STEP_UP_REQUIRED). A stolen session, or one and the password, must not add one.
   */
  proveForNewFactor(request: FastifyRequest, enrolled: readonly string[], password: string | undefined, action: string): Promise<void>;
  /**
   * A set-up `two_factor_token` enrols only the factors its challenge named (the channel's
   * policy may accept only some): another is 400 MFA_METHOD_UNAVAILABLE. A bearer caller may
   * enrol any.
   */
  requireSetupMethod(request: FastifyRequest, method: MfaMethod): void;
  /** A factor route's rate limit: per client, and per the user behind the bearer token or `two_factor_token`. */
  limit(group: RateGroup): RouteRateLimit;
  /** Finishes the sign-in after `method` was verified; returns the sign-in response. */
  finish(request: FastifyRequest, challenge: Challenge, method: string): Promise<SignInResponse>;
}

/** What resolving callers needs: the challenges, and re-authentication (lockout, hashing, audit). */
export interface RouteActorDeps extends ReauthDeps {
  challenges: ChallengeService;
}

export function routeActors(s: RouteActorDeps): RouteActors {
  const actors = new WeakMap<FastifyRequest, Actor>();
  const actorOf = (request: FastifyRequest): Actor => actors.get(request)!;
  const reauthenticate = async (request: FastifyRequest, password: string | undefined, action: string): Promise<void> => {
    const a = actorOf(request);
    if (a.kind !== 'session') return;
    if (password === undefined) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'current_password', message: 'is required with a bearer token' }] });
    await confirmCurrentPassword(s, a.user, password, auditContext(mfaContext(request)), action);
  };
  return {
    resolve: (purposes) => async (request) => {
      const token = (request.body as { two_factor_token?: string } | undefined)?.two_factor_token;
      actors.set(request, await s.challenges.actor(request, token, purposes));
    },
    actorOf,
    challengeOf(request) {
      const a = actorOf(request);
      if (a.kind !== 'challenge') throw TokenErrors.TOKEN_MISSING();
      return a.challenge;
    },
    ctxOf(request) {
      const a = actors.get(request);
      return mfaContext(request, a?.kind === 'challenge' ? a.challenge.claims.channel : undefined);
    },
    signedInUser: (request) => s.challenges.signedInUser(request),
    requireSetupMethod(request, method) {
      const a = actorOf(request);
      const allowed = a.kind === 'challenge' ? a.challenge.claims.setup_methods : undefined;
      if (allowed !== undefined && !allowed.includes(method)) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method });
    },
    limit: (group) => ({ group, account: (request) => actors.get(request)?.user.uuid ?? signedInAccount(request) }),
    reauthenticate,
    async proveForNewFactor(request, enrolled, password, action) {
      if (enrolled.length === 0) return reauthenticate(request, password, action);
      await s.challenges.requireRecentStepUp(request.auth!, enrolled);
    },
    async finish(request, challenge, method) {
      const result = await s.challenges.finish(challenge, request, method);
      useResponseKey(request, result.sessionKey); // an encrypted sign-in hands the client its session key
      return result.body;
    },
  };
}
