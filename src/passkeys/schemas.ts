/** Request and answer schemas of the passkey routes: WebAuthn's JSON forms, as browsers' `toJSON()` give them. */
import Type from 'typebox';
import { TwoFactorToken } from '../mfa/schemas.js';
import { SignInResponseSchema } from '../signin/routes.js';

const B64U = (description: string, example: string, maxLength = 65_536) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+$', description, examples: [example] });
const ISO = { format: 'date-time' } as const;

const CREDENTIAL_ID = 'pSWq2hWv0kR5bm8T9yQe3w';
const CHALLENGE_ID = '0195a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
const CHALLENGE = 'mtzc0JjS4J3vH1r2o7eKq0PvF6lYk8b3aW9cX2dE1fQ';

export const ChallengeId = Type.String({ format: 'uuid', description: 'The `challenge_id` of the options this answers: single use, 5 minutes.', examples: [CHALLENGE_ID] });
export const PasskeyName = Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', description: 'What the owner calls it (1 to 64 characters), such as the device it lives on.', examples: ['Pixel 8'] });

const Transports = Type.Array(Type.String({ maxLength: 32, examples: ['internal'] }), { maxItems: 8, description: 'How the device is reached (`internal`, `hybrid`, `usb`, `nfc`, `ble`).', examples: [['internal', 'hybrid']] });

/** `PublicKeyCredential.toJSON()` of `navigator.credentials.create()`. */
export const RegistrationCredential = Type.Object({
  id: B64U('The credential id.', CREDENTIAL_ID, 1024),
  rawId: B64U('The same, as the browser gives it.', CREDENTIAL_ID, 1024),
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: B64U('base64url of the client data JSON.', 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0'),
    attestationObject: B64U('base64url of the CBOR attestation object.', 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVi4'),
    transports: Type.Optional(Transports),
    authenticatorData: Type.Optional(B64U('base64url.', 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2NFAAAAAA')),
    publicKey: Type.Optional(B64U('base64url (SPKI).', 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE')),
    publicKeyAlgorithm: Type.Optional(Type.Integer({ examples: [-7] })),
  }, { additionalProperties: true }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32, examples: ['platform'] })),
  clientExtensionResults: Type.Object({}, { additionalProperties: true, examples: [{}] }),
}, { additionalProperties: true, description: 'What `PublicKeyCredential.toJSON()` returns after `navigator.credentials.create()` (or its equivalent on Android and iOS).' });

/** `PublicKeyCredential.toJSON()` of `navigator.credentials.get()`. */
export const AssertionCredential = Type.Object({
  id: B64U('The credential id: it names the passkey, and so the account.', CREDENTIAL_ID, 1024),
  rawId: B64U('The same, as the browser gives it.', CREDENTIAL_ID, 1024),
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: B64U('base64url of the client data JSON.', 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0'),
    authenticatorData: B64U('base64url.', 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAABQ'),
    signature: B64U('base64url.', 'MEUCIQDh7aO4m2yqE1G2B0b7r6VYk0'),
    userHandle: Type.Optional(Type.String({ maxLength: 128, pattern: '^[A-Za-z0-9_-]*$', examples: ['PwyKXitdTWqaUQxrHi9Kdw'] })),
  }, { additionalProperties: true }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32, examples: ['platform'] })),
  clientExtensionResults: Type.Object({}, { additionalProperties: true, examples: [{}] }),
}, { additionalProperties: true, description: 'What `PublicKeyCredential.toJSON()` returns after `navigator.credentials.get()`.' });

const CREATION_EXAMPLE = {
  challenge: CHALLENGE, rp: { name: 'Example Bank', id: 'bank.example' },
  user: { id: 'PwyKXitdTWqaUQxrHi9Kdw', name: 'amina.otieno', displayName: 'Amina Otieno' },
  pubKeyCredParams: [{ alg: -7, type: 'public-key' }, { alg: -8, type: 'public-key' }, { alg: -257, type: 'public-key' }],
  timeout: 300000, attestation: 'none', excludeCredentials: [{ id: CREDENTIAL_ID, type: 'public-key', transports: ['internal'] }],
  authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' }, extensions: { credProps: true },
};
const REQUEST_EXAMPLE = { challenge: CHALLENGE, rpId: 'bank.example', allowCredentials: [], timeout: 300000, userVerification: 'required' };

export const CreationOptionsResponse = Type.Object({
  challenge_id: ChallengeId,
  options: Type.Object({ challenge: Type.String() }, {
    additionalProperties: true, examples: [CREATION_EXAMPLE],
    description: '`PublicKeyCredentialCreationOptionsJSON`: give it to `PublicKeyCredential.parseCreationOptionsFromJSON()` and `navigator.credentials.create({publicKey})`.',
  }),
}, { title: 'Passkey creation options' });

export const RequestOptionsResponse = Type.Object({
  challenge_id: ChallengeId,
  options: Type.Object({ challenge: Type.String() }, {
    additionalProperties: true, examples: [REQUEST_EXAMPLE],
    description: '`PublicKeyCredentialRequestOptionsJSON`: give it to `PublicKeyCredential.parseRequestOptionsFromJSON()` and `navigator.credentials.get({publicKey})`.',
  }),
}, { title: 'Passkey request options' });

export const Passkey = Type.Object({
  id: Type.String({ format: 'uuid', examples: ['7d9c2f4e-1a3b-4c5d-8e6f-0a1b2c3d4e5f'] }),
  name: PasskeyName,
  created_at: Type.String({ ...ISO, examples: ['2026-03-04T09:20:00.000Z'] }),
  last_used_at: Type.Union([Type.String(ISO), Type.Null()], { examples: ['2026-03-05T08:00:00.000Z'] }),
  suspended_at: Type.Union([Type.String(ISO), Type.Null()], { description: 'When a copy of this passkey was detected (its signature counter went back: a cloned authenticator). A suspended passkey no longer signs in, as a second factor or a step-up either; delete it and register a new one. null: usable.', examples: [null] }),
  device_type: Type.Union([Type.Literal('singleDevice'), Type.Literal('multiDevice')], { description: '`multiDevice`: a synced passkey (a password manager, iCloud Keychain, Google Password Manager); `singleDevice`: bound to one authenticator.', examples: ['multiDevice'] }),
  backed_up: Type.Boolean({ description: 'The device says it is backed up (synced), as of its last use.', examples: [true] }),
  transports: Transports,
  aaguid: Type.String({ description: 'The authenticator model\'s AAGUID (all zeros when the device does not say).', examples: ['ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4'] }),
}, { title: 'Passkey', description: 'A passkey: never its public key or credential id.' });

export const PasskeyList = Type.Object({ passkeys: Type.Array(Passkey) }, { title: 'Passkeys' });
export const RegisteredPasskey = Type.Object({
  ...Passkey.properties,
  sign_in: Type.Optional(SignInResponseSchema),
}, { title: 'Registered passkey', description: 'The stored passkey (never its public key or credential id); with a set-up token, the sign-in it finished under `sign_in`.' });
export const Deleted = Type.Object({ deleted: Type.Literal(true), passkeys_left: Type.Integer({ minimum: 0, examples: [1] }) });

/** Without a bearer token: the set-up `two_factor_token` of `403 MFA_SETUP_INCOMPLETE` (its `setup_methods` include `passkey`). */
const SetupToken = Type.Optional(TwoFactorToken);

export const RegistrationOptionsBody = Type.Object({
  current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'With a bearer token, required when the account has no second factor yet (a stolen access token alone must not add a way to sign in).', examples: ['Vt7#qLm2!xRp9$'] })),
  two_factor_token: SetupToken,
}, { additionalProperties: false, description: '`{current_password}` with a bearer token (`{}` after a recent step-up); `{two_factor_token}` without one.', examples: [{ current_password: 'Vt7#qLm2!xRp9$' }, { two_factor_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0b2tlbl90eXBlIjoiMmZhIn0.sig' }] });
export const RegistrationBody = Type.Object({ challenge_id: ChallengeId, name: PasskeyName, response: RegistrationCredential, two_factor_token: SetupToken }, { additionalProperties: false });
export const RenameBody = Type.Object({ name: PasskeyName }, { additionalProperties: false });
export const AssertionBody = Type.Object({ challenge_id: ChallengeId, response: AssertionCredential }, { additionalProperties: false });
export const LoginBody = Type.Object({
  challenge_id: ChallengeId, response: AssertionCredential,
  device_fingerprint: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'The device fingerprint the session is bound to (else the `X-Device-Fingerprint` header).', examples: ['web-7f3a9c'] })),
}, { additionalProperties: false });
export const TwoFactorOptionsBody = Type.Object({ two_factor_token: TwoFactorToken }, { additionalProperties: false });
export const TwoFactorVerifyBody = Type.Object({ two_factor_token: TwoFactorToken, challenge_id: ChallengeId, response: AssertionCredential }, { additionalProperties: false });
export const EmptyBody = Type.Object({}, { additionalProperties: false, description: 'Nothing: an empty body means `{}`.', examples: [{}] });
export const PasskeyParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The passkey\'s `id`.', examples: ['7d9c2f4e-1a3b-4c5d-8e6f-0a1b2c3d4e5f'] }) });
