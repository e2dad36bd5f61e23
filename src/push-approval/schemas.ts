/** Request and answer schemas of the push-approval routes (docs/push-approval.md). */
import Type from 'typebox';
import { TwoFactorToken } from '../mfa/schemas.js';

const B64U = (description: string, example: string, maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+$', description, examples: [example] });

const REQUEST_ID = '3f6c1a2b-8d4e-4f5a-9b6c-7d8e9f0a1b2c';
const DEVICE_ID = '5b1e7c3a-2d4f-4a6b-8c9d-0e1f2a3b4c5d';
const PUBLIC_KEY = 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq3Zs8yQ4c0fWb1x9V2kLr7mQeT5uN8pJ3hD6gA1sK0oR4iY7vX2bC9nM5lE8wU3tZ6yP1aH4jG7fS0dQ2eI9rO';
const SIGNATURE = 'MEUCIQDx4m8k1Zf3vYc6qL9aR2tN5pW8sB0hJ7eG4dU1oK3yTAIgV6nC9rM2lP5xF8bH1jD4wQ7sE0aZ3uY6tI9kO2gN5mA';
const CHALLENGE = 'kP3vR8tY1wQ6zM9nB2cX5aL0jH7gF4dS6eU1iO3pK8m';
const PASSWORD = 'Vt7#qLm2!xRp9$';

export const SetupBody = Type.Object({
  device_id: Type.String({ format: 'uuid', description: 'The `id` of the phone\'s device token (`POST /api/v1/notifications/devices/register`, platform `mobile`, active): where the approval requests will be sent.', examples: [DEVICE_ID] }),
  public_key: Type.Optional(B64U('The P-256 public key the phone made in its secure hardware (Android Keystore, iOS Secure Enclave): SubjectPublicKeyInfo, DER, base64url. Leave it out to get the challenge first (an Android key attests the challenge, so it is made after this call) and send the key with the confirmation.', PUBLIC_KEY, 512)),
  current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Required when the account has no second factor yet (a stolen access token alone must not add a way to sign in).', examples: [PASSWORD] })),
}, { additionalProperties: false, title: 'Push-approval setup', examples: [{ device_id: DEVICE_ID, current_password: PASSWORD }, { device_id: DEVICE_ID, public_key: PUBLIC_KEY, current_password: PASSWORD }] });

const Mode = Type.Union([Type.Literal('required'), Type.Literal('optional'), Type.Literal('off')], {
  description: 'Whether the confirmation needs a key attestation (`PUSH_APPROVAL_ATTESTATION`): `required`, it must carry one that verifies; `optional`, one sent must verify; `off`, none is looked at.',
  examples: ['required'],
});

export const SetupResponse = Type.Object({
  challenge: Type.String({ description: 'What the phone signs, as `strongroom-push-approval-enrol|<user id>|<challenge>`, and sends to `POST /api/v1/2fa/push-approval/confirm`; also what its key attestation names (Android: `setAttestationChallenge` with its UTF-8 bytes; iOS: App Attest over SHA-256 of `strongroom-push-approval-attest|<challenge>|<public key>`).', examples: [CHALLENGE] }),
  expires_in: Type.Integer({ description: 'Seconds left to confirm (300).', examples: [300] }),
  attestation: Mode,
}, { title: 'Push-approval challenge', examples: [{ challenge: CHALLENGE, expires_in: 300, attestation: 'required' }] });

const CERT = 'MIICxjCCAmygAwIBAgIBATAKBggqhkjOPQQDAjA5MQwwCgYDVQQMDANURUUxKTAnBgNVBAUTIDVlNzY=';
const KEY_ID = 'bQ6y2mR1x8Zk3VqL0pW7nT4sH9cJ5fA2eD1gU6iO3rE=';
const ATTESTATION_OBJECT = 'o2NmbXRvYXBwbGUtYXBwYXR0ZXN0Z2F0dFN0bXSiY3g1Y4JZAzswggM3MIICvaADAgECAgYBjW==';
const STD_B64 = '^[A-Za-z0-9+/_-]+={0,2}$';

export const AndroidKeyAttestation = Type.Object({
  format: Type.Literal('android-key'),
  certificate_chain: Type.Array(Type.String({ minLength: 1, maxLength: 8192, pattern: STD_B64, description: 'One certificate, DER, base64 (no line breaks).', examples: [CERT] }), {
    minItems: 1, maxItems: 10, description: '`KeyStore.getCertificateChain(alias)` of the push-approval key, leaf first, each certificate\'s `encoded` bytes in base64.', examples: [[CERT]],
  }),
}, { additionalProperties: false, title: 'Android Key Attestation', description: 'The key was generated in the phone\'s TEE or StrongBox with `setAttestationChallenge(challenge UTF-8 bytes)`; the chain ends at Google\'s hardware attestation root. Keys attested by an app-made attestation key (`setAttestKeyAlias`) are refused.', examples: [{ format: 'android-key', certificate_chain: [CERT] }] });

export const AppAttestAttestation = Type.Object({
  format: Type.Literal('apple-appattest'),
  key_id: Type.String({ minLength: 1, maxLength: 64, pattern: STD_B64, description: 'The App Attest key id `DCAppAttestService.generateKey` gave (base64).', examples: [KEY_ID] }),
  attestation_object: Type.String({ minLength: 1, maxLength: 32768, pattern: STD_B64, description: 'What `attestKey(keyId, clientDataHash:)` answered, base64; `clientDataHash` is SHA-256 of `strongroom-push-approval-attest|<challenge>|<public key>` (UTF-8).', examples: [ATTESTATION_OBJECT] }),
}, { additionalProperties: false, title: 'iOS App Attest', description: 'The genuine app, on a genuine Apple device, vouches for the push-approval key it made in the Secure Enclave.', examples: [{ format: 'apple-appattest', key_id: KEY_ID, attestation_object: ATTESTATION_OBJECT }] });

export const ConfirmBody = Type.Object({
  signature: B64U('ECDSA P-256 with SHA-256, DER-encoded, base64url, over `strongroom-push-approval-enrol|<user id>|<challenge>` (UTF-8).', SIGNATURE, 256),
  public_key: Type.Optional(B64U('The P-256 public key (SPKI DER, base64url): required when the setup was sent without one; otherwise, when sent, it must be the setup\'s.', PUBLIC_KEY, 512)),
  attestation: Type.Optional(Type.Union([AndroidKeyAttestation, AppAttestAttestation], { description: 'The key attestation: required when the setup answered `attestation: required`.' })),
}, {
  additionalProperties: false, title: 'Push-approval confirmation',
  examples: [{ signature: SIGNATURE, public_key: PUBLIC_KEY, attestation: { format: 'android-key', certificate_chain: [CERT] } }, { signature: SIGNATURE }],
});

export const ConfirmResponse = Type.Object({
  enrolled: Type.Literal(true),
  method: Type.Literal('push_approval'),
  attestation: Type.Union([Type.Literal('tee'), Type.Literal('strongbox'), Type.Literal('app_attest'), Type.Literal('none')], {
    description: 'What the key attestation proved: `tee` or `strongbox`, an Android key made in that secure hardware; `app_attest`, a key handed over by the genuine iOS app; `none`, no attestation.', examples: ['tee'],
  }),
}, { title: 'Push approval enrolled', examples: [{ enrolled: true, method: 'push_approval', attestation: 'tee' }] });

export const RequestBody = Type.Object({ two_factor_token: TwoFactorToken }, { additionalProperties: false, title: 'Push-approval request', examples: [{ two_factor_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0b2tlbl90eXBlIjoiMmZhIn0.sig' }] });

export const RequestResponse = Type.Object({
  request_id: Type.String({ format: 'uuid', description: 'The request: goes to `POST /api/v1/auth/push-approval/complete` for a sign-in, to `POST /api/v1/auth/push-approval/step-up/complete` for a step-up.', examples: [REQUEST_ID] }),
  number: Type.Integer({ minimum: 10, maximum: 99, description: 'The number the asking page (a sign-in, or a step-up) shows: the user picks it on the phone.', examples: [47] }),
  expires_in: Type.Integer({ description: 'Seconds the phone has left to answer.', examples: [300] }),
}, { title: 'Push-approval request sent', examples: [{ request_id: REQUEST_ID, number: 47, expires_in: 300 }] });

/** The long poll of the completion routes. */
const WaitSeconds = Type.Optional(Type.Integer({
  minimum: 0, maximum: 25,
  description: 'Long poll: while the phone has not answered, hold the answer up to this many seconds (0 to 25; 0 by default: answer at once). It comes as soon as the request is approved, denied or expired, else when the wait ends (`409 PUSH_APPROVAL_PENDING`, ask again); the answers are those without waiting. A node holding many pages already answers at once.',
  examples: [25],
}));

export const CompleteBody = Type.Object({
  two_factor_token: TwoFactorToken,
  request_id: Type.String({ format: 'uuid', description: 'The `request_id` of `POST /api/v1/auth/push-approval/request` with the same token.', examples: [REQUEST_ID] }),
  wait_seconds: WaitSeconds,
}, { additionalProperties: false, title: 'Push-approval completion', examples: [{ two_factor_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0b2tlbl90eXBlIjoiMmZhIn0.sig', request_id: REQUEST_ID, wait_seconds: 25 }] });

export const StepUpRequestBody = Type.Object({}, { additionalProperties: false, title: 'Push-approval step-up request', description: 'Nothing: an empty body means `{}`.', examples: [{}] });

export const StepUpCompleteBody = Type.Object({
  request_id: Type.String({ format: 'uuid', description: 'The `request_id` of `POST /api/v1/auth/push-approval/step-up/request` in this session.', examples: [REQUEST_ID] }),
  wait_seconds: WaitSeconds,
}, { additionalProperties: false, title: 'Push-approval step-up completion', examples: [{ request_id: REQUEST_ID, wait_seconds: 25 }] });

export const RequestParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The `request_id` of the push (`data.request_id`).', examples: [REQUEST_ID] }) });

const State = Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('denied'), Type.Literal('expired')], { description: '`pending` until answered or expired (5 minutes).', examples: ['pending'] });
const Nullable = (description: string, example: string) => Type.Union([Type.String(), Type.Null()], { description, examples: [example] });

const VIEW_EXAMPLE = {
  id: REQUEST_ID, purpose: 'sign_in', choices: [83, 47, 12], location: { city: 'Lisbon', country: 'PT' }, device: { browser: 'Firefox', system: 'Windows' },
  channel: 'web', requested_at: '2026-12-06T08:00:00.000Z', expires_at: '2026-12-06T08:05:00.000Z', state: 'pending',
};
export const RequestView = Type.Object({
  id: Type.String({ format: 'uuid', examples: [REQUEST_ID] }),
  purpose: Type.Union([Type.Literal('sign_in'), Type.Literal('step_up')], { description: 'What the user approves: `sign_in`, a sign-in; `step_up`, a session of theirs that is already signed in confirming it is them (before a sensitive change, such as enrolling a new phone).', examples: ['sign_in'] }),
  choices: Type.Array(Type.Integer({ minimum: 10, maximum: 99 }), { minItems: 3, maxItems: 3, description: 'Three numbers, one of them the number the asking page (the sign-in, or the session stepping up) shows, in random order.', examples: [[83, 47, 12]] }),
  location: Type.Object({ city: Nullable('Where the asking page is (the sign-in, or the session stepping up), when the geolocation knows it.', 'Lisbon'), country: Nullable('ISO 3166-1 alpha-2.', 'PT') }, { examples: [{ city: 'Lisbon', country: 'PT' }] }),
  device: Type.Object({ browser: Nullable('The browser of the asking page, from its user agent.', 'Firefox'), system: Nullable('Its operating system.', 'Windows') }, { examples: [{ browser: 'Firefox', system: 'Windows' }] }),
  channel: Type.String({ description: 'The channel of the sign-in, or of the session stepping up (`web`, `mobile`, ...).', examples: ['web'] }),
  requested_at: Type.String({ format: 'date-time', examples: ['2026-12-06T08:00:00.000Z'] }),
  expires_at: Type.String({ format: 'date-time', examples: ['2026-12-06T08:05:00.000Z'] }),
  state: State,
}, { title: 'Push-approval request', examples: [VIEW_EXAMPLE] });

export const AnswerBody = Type.Object({
  decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')], { examples: ['approve'] }),
  choice: Type.Optional(Type.Integer({ minimum: 10, maximum: 99, description: 'The number the user picked among `choices` (required to approve).', examples: [47] })),
  report_fraud: Type.Optional(Type.Boolean({ description: 'With `deny`: the user did not try to sign in (or to step up); the bank\'s security team is alerted, every pending request is denied, push approval pauses for `PUSH_APPROVAL_FRAUD_PAUSE_HOURS`, and the session that asked for a step-up ends. Signed as the decision `deny_fraud`.', examples: [false] })),
  signature: B64U('ECDSA P-256 with SHA-256 (DER, base64url) by the enrolled key over `strongroom-push-approval:v1|<user id>|<request id>|<decision>|<choice, or empty>` (UTF-8), the decision `approve`, `deny`, or `deny_fraud` for a `deny` with `report_fraud: true`.', SIGNATURE, 256),
}, { additionalProperties: false, title: 'Push-approval answer', examples: [{ decision: 'approve', choice: 47, signature: SIGNATURE }] });

export const AnswerResponse = Type.Object({
  id: Type.String({ format: 'uuid', examples: [REQUEST_ID] }),
  state: Type.Union([Type.Literal('approved'), Type.Literal('denied')], { examples: ['approved'] }),
  deny_reason: Type.Union([Type.Literal('denied'), Type.Literal('wrong_number'), Type.Literal('fraud_reported'), Type.Literal('superseded'), Type.Literal('factor_removed'), Type.Null()], { description: 'Why it was denied: the user said no, picked another number, or reported fraud (a newer request superseded it, or the factor was removed, before an answer).', examples: [null] }),
}, { title: 'Push-approval answered', examples: [{ id: REQUEST_ID, state: 'approved', deny_reason: null }] });
