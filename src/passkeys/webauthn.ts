/**
 * The WebAuthn ceremonies, through @simplewebauthn/server: options for `navigator.credentials`
 * and the checks of the device's answers against this service's relying party (WEBAUTHN_RP_ID)
 * and origins (WEBAUTHN_ORIGINS), user verification always required. No database here.
 */
import {
  generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse,
  type AuthenticationResponseJSON, type AuthenticatorTransportFuture, type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON, type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { WebAuthnConfig } from '../platform/config-webauthn.js';
import { CHALLENGE_TTL_MS, type NewPasskey, type PasskeyRow } from './store.js';

export type { AuthenticationResponseJSON, RegistrationResponseJSON };

const b64u = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

/** The user handle a passkey carries: the account's public uuid as 16 bytes (no name, no email). */
export function userHandle(uuid: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(uuid.replace(/-/g, ''), 'hex'));
}

const descriptor = (p: Pick<PasskeyRow, 'credentialId' | 'transports'>) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransportFuture[] });

export function creationOptions(rp: WebAuthnConfig, user: { uuid: string; username: string; displayName: string }, existing: readonly PasskeyRow[]): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.rpName, rpID: rp.rpId, userID: userHandle(user.uuid), userName: user.username, userDisplayName: user.displayName,
    timeout: CHALLENGE_TTL_MS, attestationType: 'none', excludeCredentials: existing.map(descriptor),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: [-7, -8, -257],
  });
}

/** Request options; `allowed` empty: any discoverable passkey of this relying party (a passwordless sign-in). */
export function requestOptions(rp: WebAuthnConfig, allowed: readonly PasskeyRow[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({ rpID: rp.rpId, allowCredentials: allowed.map(descriptor), userVerification: 'required', timeout: CHALLENGE_TTL_MS });
}

/** The new credential, or the reason its registration answer was refused. */
export async function checkRegistration(rp: WebAuthnConfig, response: RegistrationResponseJSON, challenge: string): Promise<Omit<NewPasskey, 'userId' | 'name'> | { refused: string }> {
  let verified;
  try {
    verified = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: [...rp.origins], expectedRPID: rp.rpId, requireUserVerification: true, requireUserPresence: true });
  } catch (err) {
    return { refused: reasonOf(err) };
  }
  if (!verified.verified) return { refused: 'not verified' };
  const info = verified.registrationInfo;
  return {
    credentialId: info.credential.id, publicKey: b64u(info.credential.publicKey), signCount: info.credential.counter,
    transports: response.response.transports ?? [], deviceType: info.credentialDeviceType, backedUp: info.credentialBackedUp, aaguid: info.aaguid,
  };
}

export interface AssertionResult {
  newCounter: number;
  backedUp: boolean;
  deviceType: PasskeyRow['deviceType'];
}

/**
 * Checks an assertion by `passkey` against `challenge`. The stored counter is not given to the
 * library: the caller compares it (a counter that went back is a clone, told apart from a bad
 * signature, and only once the signature proved the answer came from the key).
 */
export async function checkAssertion(rp: WebAuthnConfig, response: AuthenticationResponseJSON, challenge: string, passkey: PasskeyRow): Promise<AssertionResult | { refused: string }> {
  try {
    const v = await verifyAuthenticationResponse({
      response, expectedChallenge: challenge, expectedOrigin: [...rp.origins], expectedRPID: rp.rpId, requireUserVerification: true,
      credential: { id: passkey.credentialId, publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')), counter: 0, transports: passkey.transports as AuthenticatorTransportFuture[] },
    });
    if (!v.verified) return { refused: 'signature' };
    return { newCounter: v.authenticationInfo.newCounter, backedUp: v.authenticationInfo.credentialBackedUp, deviceType: v.authenticationInfo.credentialDeviceType };
  } catch (err) {
    return { refused: reasonOf(err) };
  }
}

/** The library's reason, short and without the values the answer carried. */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/origin/i.test(message)) return 'origin';
  if (/RP ID|rpID|rp id/i.test(message)) return 'relying_party';
  if (/verif/i.test(message) && /user/i.test(message)) return 'user_verification';
  if (/challenge/i.test(message)) return 'challenge';
  return 'malformed';
}
