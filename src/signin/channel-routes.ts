/**
 * The mobile and agent channels (SPEC "Core authentication"; issue 10, section 1): sign-in from
 * the bank's app, and validate for those channels. A channel is known by the route a request
 * arrives on, never by what a body claims: `POST /auth/login` is the web, this file's sign-in
 * is the app (as a customer on `mobile`, or as an agent on `agent`), and USSD has its gateway's
 * route. Bodies are docs/decisions.md "Access policy".
 */
import Type, { type Static } from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CommonErrors } from '../platform/errors.js';
import { bodyField } from '../policy/route-limits.js';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import type { AuthContext, ReportedLocation } from '../sessions/guard.js';
import { useResponseKey } from '../transport/plugin.js';
import { SignInErrors } from './errors.js';
import { clientContext, SignInResponseSchema, validated, ValidateResponse, type SigninRouteDeps } from './routes.js';
import { SIGN_IN_ERRORS } from './error-sets.js';

const Latitude = Type.Number({ minimum: -90, maximum: 90, description: 'WGS 84 degrees.', examples: [-1.28638] });
const Longitude = Type.Number({ minimum: -180, maximum: 180, description: 'WGS 84 degrees.', examples: [36.81723] });
const Accuracy = Type.Number({ minimum: 0, maximum: 100_000, description: 'Radius of the fix\'s uncertainty, metres (Android `getAccuracy()`, iOS `horizontalAccuracy`).', examples: [12] });

const LocationFields = {
  latitude: Type.Optional(Latitude),
  longitude: Type.Optional(Longitude),
  accuracy_m: Type.Optional(Accuracy),
};

const MobileLoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 256, pattern: NO_NUL, description: 'Username or email', examples: ['wanjiru.kamau'] }),
  password: Type.String({ minLength: 1, maxLength: 1024, examples: ['c0rrect-Battery-staple!'] }),
  device_fingerprint: Type.String({ minLength: 8, maxLength: 256, pattern: '^[\\x21-\\x7e]+$', description: 'The app\'s stable identifier of this device (printable ASCII, no spaces). The session is bound to it: every later request sends it in `X-Device-Fingerprint`. On a channel that requires a bound device it must be one an administrator approved.', examples: ['a3f1c9e07b2d4e58-7f3a'] }),
  channel: Type.Optional(Type.Union([Type.Literal('mobile'), Type.Literal('agent')], { default: 'mobile', description: '`agent`: the agent app; agents\' policies (bound phone, branch geofence, hours) apply.' })),
  ...LocationFields,
}, { additionalProperties: false, description: 'A location is all three of `latitude`, `longitude` and `accuracy_m`, or none.' });

const AgentValidateBody = Type.Object({
  latitude: Latitude,
  longitude: Longitude,
  accuracy_m: Accuracy,
}, { additionalProperties: false });

/** The location of a body, or undefined; 422 naming the missing fields when only some are given. */
function locationOf(body: { latitude?: number; longitude?: number; accuracy_m?: number }): ReportedLocation | undefined {
  const given = (['latitude', 'longitude', 'accuracy_m'] as const).filter((k) => body[k] !== undefined);
  if (given.length === 0) return undefined;
  if (given.length < 3) {
    const missing = (['latitude', 'longitude', 'accuracy_m'] as const).filter((k) => body[k] === undefined);
    throw CommonErrors.VALIDATION_ERROR({ fields: missing.map((field) => ({ location: 'body', field, message: 'a location needs latitude, longitude and accuracy_m together' })) });
  }
  return { latitude: body.latitude, longitude: body.longitude, accuracy_m: body.accuracy_m };
}

/** 403 CHANNEL_MISMATCH unless the session was opened on one of `channels`. */
function requireChannel(auth: AuthContext, channels: readonly string[]): void {
  if (!channels.includes(auth.session.channel)) throw SignInErrors.CHANNEL_MISMATCH({ channel: auth.session.channel });
}

export function channelRoutes(s: SigninRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const tags = ['Core authentication'];
    const bearer = [{ bearer: [] }];

    app.post('/api/v1/auth/login/mobile', {
      schema: {
        tags, summary: 'Sign in from the bank\'s app (mobile customers and agents)',
        description: [
          'The app\'s sign-in: the same checks and answers as `POST /api/v1/auth/login`, on the `mobile` channel (or `agent` with `"channel": "agent"`), with the session bound to `device_fingerprint`.',
          '',
          '- `403 POLICY_RESTRICTED` with `details.rule`: `channel`, `ip`, `schedule`, `device` (this device is not bound to the user: an administrator approves it from the pending request this sign-in leaves), `geofence` (outside the allowed areas, or no or too inaccurate a location), `factor` (the user holds no second factor this channel accepts: enrol one on the web first).',
          '- `422 VALIDATION_ERROR`: no `device_fingerprint`, a coordinate out of range, or only part of a location.',
          '',
          'A pre-auth route of transport encryption (the app\'s first request).',
        ].join('\n'),
        body: { ...MobileLoginBody, examples: [{ username: 'wanjiru.kamau', password: 'c0rrect-Battery-staple!', device_fingerprint: 'a3f1c9e07b2d4e58-7f3a', channel: 'agent', latitude: -1.28638, longitude: 36.81723, accuracy_m: 12 }] },
        response: { 200: SignInResponseSchema, ...errors(...SIGN_IN_ERRORS) },
      },
      config: { rateLimit: { group: 'signin', account: bodyField('username') } },
    }, async (request) => {
      const body = request.body;
      const ctx = { ...clientContext(request, s.ipHasher, body.channel ?? 'mobile', body.device_fingerprint), location: locationOf(body) };
      const result = await s.pipeline.signIn(s.local, { username: body.username, password: body.password }, ctx);
      useResponseKey(request, result.sessionKey);
      return result.body;
    });

    app.post('/api/v1/auth/validate/mobile', {
      schema: {
        tags, security: bearer, summary: 'Validate an access token of the app\'s mobile channel',
        description: 'As `POST /api/v1/auth/validate`, for a session opened on the `mobile` channel, whose token is bound to a device: `X-Device-Fingerprint` must be sent and match, and where the channel\'s policy requires a bound device, that device must still be approved (`403 POLICY_RESTRICTED` rule `device` once an administrator revokes it). A session of another channel is `403 CHANNEL_MISMATCH`. No body is read.',
        response: { 200: ValidateResponse, ...errors(SignInErrors.CHANNEL_MISMATCH) },
      },
      preHandler: [s.guard.authenticate, async (request: FastifyRequest) => requireChannel(request.auth!, ['mobile'])],
    }, async (request) => validated(request.auth!));

    app.post('/api/v1/auth/agent/validate', {
      schema: {
        tags, security: bearer, summary: 'Validate an agent\'s access token where the agent is now',
        description: 'As `POST /api/v1/auth/validate`, for a session opened on the `agent` channel, with the device\'s current location: the agent channel\'s policies are checked for this request, geofences included (`403 POLICY_RESTRICTED` rule `geofence` outside the allowed areas or when `accuracy_m` is worse than the policy accepts; rule `device` once the phone\'s binding is revoked; `schedule` after hours). A session of another channel is `403 CHANNEL_MISMATCH`. A pre-auth route of transport encryption.',
        body: { ...AgentValidateBody, examples: [{ latitude: -1.28638, longitude: 36.81723, accuracy_m: 12 }] },
        response: { 200: ValidateResponse, ...errors(SignInErrors.CHANNEL_MISMATCH) },
      },
      // The body is read before the guard (a pre-auth route): its location goes to the policy check.
      preHandler: [s.guard.authenticateAt((request) => locationOf(request.body as Static<typeof AgentValidateBody>)), async (request: FastifyRequest) => requireChannel(request.auth!, ['agent'])],
    }, async (request) => validated(request.auth!));
  };
}
