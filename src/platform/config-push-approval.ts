/**
 * Key attestation at push-approval enrolment (src/push-approval/attestation; docs/push-approval.md):
 * PUSH_APPROVAL_ATTESTATION, the apps whose attestations are accepted, and the roots they must
 * chain to. Read by config.ts, the only module that reads the environment; every problem stops
 * start-up with the others, naming the setting.
 *
 * - PUSH_APPROVAL_ATTESTATION: `required` (production's default: a phone must prove its key was
 *   made in secure hardware, by our app), `optional` (elsewhere by default: an attestation sent
 *   must verify, none is accepted), `off` (never checked).
 * - PUSH_APPROVAL_ANDROID_PACKAGES, PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS: the Android apps (package
 *   names; the SHA-256 of their signing certificates). Without packages, `required` accepts no
 *   Android attestation (`platform_not_accepted`) and `optional` a hardware key of any app.
 * - PUSH_APPROVAL_IOS_APP_ID (`TEAMID.bundle.id`): the iOS app App Attest must vouch for; without
 *   it no App Attest attestation is accepted (there is nothing to check it against).
 *   PUSH_APPROVAL_IOS_APP_ATTEST_DEVELOPMENT=1 accepts development (Xcode) keys: never in production.
 * - PUSH_APPROVAL_ANDROID_ROOTS_FILE, PUSH_APPROVAL_APPLE_ROOTS_FILE: PEM bundles that replace the
 *   embedded roots (Google's, Apple's): tests, or a root published before a release ships it.
 */
import { X509Certificate } from 'node:crypto';

export type PushApprovalAttestationMode = 'off' | 'optional' | 'required';
export const ATTESTATION_MODES: readonly PushApprovalAttestationMode[] = ['off', 'optional', 'required'];

export interface PushApprovalAttestationConfig {
  readonly mode: PushApprovalAttestationMode;
  readonly android: {
    /** Accepted package names; empty: any app's hardware key in `optional` mode, no Android attestation in `required` mode. */
    readonly packageNames: readonly string[];
    /** SHA-256 of accepted signing certificates, lowercase hex; empty: any signer of those packages. */
    readonly signatureDigests: readonly string[];
    /** PEM roots replacing Google's; undefined: the embedded ones. */
    readonly roots?: readonly string[];
  };
  readonly ios: {
    /** `TEAMID.bundle.id`; undefined: no App Attest attestation is accepted. */
    readonly appId?: string;
    readonly allowDevelopment: boolean;
    /** PEM roots replacing Apple's App Attestation root; undefined: the embedded one. */
    readonly roots?: readonly string[];
  };
}

const PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
const APP_ID = /^[A-Z0-9]{10}\.[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;
const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

const list = (raw: string | undefined): string[] => (raw ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');

/** A SHA-256 digest as hex (`AB:CD:...` as keytool and apksigner print it, or plain) or base64url (43 characters), as lowercase hex; undefined when it is neither. */
export function signingDigestHex(raw: string): string | undefined {
  const hex = raw.replace(/:/g, '');
  if (/^[0-9a-fA-F]{64}$/.test(hex)) return hex.toLowerCase();
  if (/^[A-Za-z0-9_-]{43}$/.test(raw)) return Buffer.from(raw, 'base64url').toString('hex');
  return undefined;
}

/** The certificates of a PEM bundle file, each checked to parse; problems name the setting. */
function rootsFrom(name: string, file: string | undefined, readFile: (file: string) => string, problems: string[]): string[] | undefined {
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFile(file);
  } catch (err) {
    problems.push(`${name}: ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
  const pems = [...text.matchAll(PEM)].map((m) => `${m[0]}\n`);
  if (pems.length === 0) problems.push(`${name}: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  pems.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch {
      problems.push(`${name}: certificate ${i + 1} of ${file} does not parse`);
    }
  });
  return pems;
}

export function readPushApprovalAttestationEnv(opt: (name: string) => string | undefined, readFile: (file: string) => string, problems: string[], production: boolean, bool: (name: string, fallback: boolean) => boolean): PushApprovalAttestationConfig {
  const rawMode = opt('PUSH_APPROVAL_ATTESTATION');
  let mode: PushApprovalAttestationMode = production ? 'required' : 'optional';
  if (rawMode !== undefined) {
    if ((ATTESTATION_MODES as readonly string[]).includes(rawMode)) mode = rawMode as PushApprovalAttestationMode;
    else problems.push(`PUSH_APPROVAL_ATTESTATION must be one of ${ATTESTATION_MODES.join(', ')} (got "${rawMode.slice(0, 40)}")`);
  }
  const packageNames = list(opt('PUSH_APPROVAL_ANDROID_PACKAGES'));
  for (const p of packageNames) if (!PACKAGE.test(p)) problems.push(`PUSH_APPROVAL_ANDROID_PACKAGES: "${p.slice(0, 100)}" is not an Android package name such as com.bank.app`);
  const signatureDigests: string[] = [];
  for (const d of list(opt('PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS'))) {
    const hex = signingDigestHex(d);
    if (hex === undefined) problems.push(`PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS: "${d.slice(0, 100)}" is not a SHA-256 digest (64 hex digits, colons allowed, or 43 base64url characters)`);
    else signatureDigests.push(hex);
  }
  if (signatureDigests.length > 0 && packageNames.length === 0) problems.push('PUSH_APPROVAL_ANDROID_SIGNING_DIGESTS needs PUSH_APPROVAL_ANDROID_PACKAGES: the digests are checked for those packages');
  const appId = opt('PUSH_APPROVAL_IOS_APP_ID')?.trim();
  if (appId !== undefined && !APP_ID.test(appId)) problems.push(`PUSH_APPROVAL_IOS_APP_ID must be the App ID, TEAMID.bundle.id (a 10-character team id, such as ABCDE12345.com.bank.app); got "${appId.slice(0, 100)}"`);
  const allowDevelopment = bool('PUSH_APPROVAL_IOS_APP_ATTEST_DEVELOPMENT', false);
  if (allowDevelopment && production) problems.push('PUSH_APPROVAL_IOS_APP_ATTEST_DEVELOPMENT=1 accepts App Attest keys of development (Xcode) builds: never in production (unset it)');
  const androidRoots = rootsFrom('PUSH_APPROVAL_ANDROID_ROOTS_FILE', opt('PUSH_APPROVAL_ANDROID_ROOTS_FILE'), readFile, problems);
  const appleRoots = rootsFrom('PUSH_APPROVAL_APPLE_ROOTS_FILE', opt('PUSH_APPROVAL_APPLE_ROOTS_FILE'), readFile, problems);
  // Without a push provider (PUSH_PROJECT_ID) nothing can be approved by push: nothing to configure yet.
  const pushConfigured = opt('PUSH_PROJECT_ID') !== undefined;
  if (production && pushConfigured && mode === 'required' && packageNames.length === 0 && appId === undefined) {
    problems.push('PUSH_APPROVAL_ATTESTATION=required (the default in production, with push configured by PUSH_PROJECT_ID) needs the apps whose phones may enrol: set PUSH_APPROVAL_ANDROID_PACKAGES (the Android app\'s package names, such as com.bank.app) and/or PUSH_APPROVAL_IOS_APP_ID (the iOS App ID, such as ABCDE12345.com.bank.app), or choose PUSH_APPROVAL_ATTESTATION=optional or off');
  }
  return Object.freeze({
    mode,
    android: Object.freeze({ packageNames: Object.freeze(packageNames), signatureDigests: Object.freeze(signatureDigests), ...(androidRoots ? { roots: Object.freeze(androidRoots) } : {}) }),
    ios: Object.freeze({ ...(appId === undefined ? {} : { appId }), allowDevelopment: allowDevelopment && !production, ...(appleRoots ? { roots: Object.freeze(appleRoots) } : {}) }),
  });
}
