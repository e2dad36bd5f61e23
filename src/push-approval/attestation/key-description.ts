/**
 * Android's key description, the attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) of the
 * attested key's certificate, as the Android source documents it:
 *
 *   KeyDescription ::= SEQUENCE {
 *     attestationVersion INTEGER, attestationSecurityLevel SecurityLevel,
 *     keyMintVersion INTEGER, keyMintSecurityLevel SecurityLevel,
 *     attestationChallenge OCTET STRING, uniqueId OCTET STRING,
 *     softwareEnforced AuthorizationList, hardwareEnforced AuthorizationList }
 *   SecurityLevel ::= ENUMERATED { Software (0), TrustedEnvironment (1), StrongBox (2) }
 *
 * An AuthorizationList is a SEQUENCE of optional `[tag] EXPLICIT` fields; only those read here are
 * decoded: origin [702], rootOfTrust [704], attestationApplicationId [709].
 */
import {
  CLASS_CONTEXT, TAG_ENUMERATED, TAG_INTEGER, TAG_SET, DerError, boolean, childrenOf, expectUniversal, octets, parseDer, sequenceOf, smallUint, type DerNode,
} from './der.js';

export const KEY_DESCRIPTION_OID = '1.3.6.1.4.1.11129.2.1.17';

export const SECURITY_LEVEL = { software: 0, trustedEnvironment: 1, strongBox: 2 } as const;
/** KeyOrigin GENERATED: made inside the secure hardware (not imported). */
export const ORIGIN_GENERATED = 0;

const TAG_ORIGIN = 702;
const TAG_ROOT_OF_TRUST = 704;
const TAG_ATTESTATION_APPLICATION_ID = 709;

export interface RootOfTrust {
  readonly deviceLocked: boolean;
  /** Verified (0), SelfSigned (1), Unverified (2), Failed (3). */
  readonly verifiedBootState: number;
}

export interface AttestationApplicationId {
  /** The package names (their version codes are not read: a long may exceed a JavaScript number). */
  readonly packageNames: readonly string[];
  /** SHA-256 digests of the app's signing certificates. */
  readonly signatureDigests: readonly Buffer[];
}

export interface AuthorizationList {
  /** The explicit tags present. */
  readonly tags: ReadonlySet<number>;
  readonly origin?: number;
  readonly rootOfTrust?: RootOfTrust;
  readonly applicationId?: AttestationApplicationId;
}

export interface KeyDescription {
  readonly attestationVersion: number;
  readonly attestationSecurityLevel: number;
  readonly keyMintVersion: number;
  readonly keyMintSecurityLevel: number;
  readonly attestationChallenge: Buffer;
  readonly softwareEnforced: AuthorizationList;
  readonly hardwareEnforced: AuthorizationList;
}

function explicitFields(list: DerNode | undefined): Map<number, DerNode> {
  const fields = new Map<number, DerNode>();
  for (const entry of sequenceOf(list)) {
    if (entry.cls !== CLASS_CONTEXT || !entry.constructed) throw new DerError('authorization list entry is not [tag] EXPLICIT');
    if (fields.has(entry.tag)) throw new DerError(`duplicate authorization tag ${entry.tag}`);
    const inner = childrenOf(entry);
    if (inner.length !== 1) throw new DerError(`authorization tag ${entry.tag} holds ${inner.length} values`);
    fields.set(entry.tag, inner[0]!);
  }
  return fields;
}

function rootOfTrustOf(node: DerNode): RootOfTrust {
  const [bootKey, locked, state] = sequenceOf(node);
  octets(bootKey);
  return { deviceLocked: boolean(locked), verifiedBootState: smallUint(state, TAG_ENUMERATED) };
}

function applicationIdOf(node: DerNode): AttestationApplicationId {
  const [infos, digests, ...rest] = sequenceOf(parseDer(octets(node)));
  if (rest.length > 0) throw new DerError('attestation application id shape');
  const packageNames = sequenceOf(infos, TAG_SET).map((info) => {
    const [name, version] = sequenceOf(info);
    expectUniversal(version, TAG_INTEGER);
    return octets(name).toString('utf8');
  });
  return { packageNames, signatureDigests: sequenceOf(digests, TAG_SET).map((d) => octets(d)) };
}

function authorizationListOf(list: DerNode | undefined): AuthorizationList {
  const fields = explicitFields(list);
  const origin = fields.get(TAG_ORIGIN);
  const rot = fields.get(TAG_ROOT_OF_TRUST);
  const appId = fields.get(TAG_ATTESTATION_APPLICATION_ID);
  return {
    tags: new Set(fields.keys()),
    ...(origin ? { origin: smallUint(origin) } : {}),
    ...(rot ? { rootOfTrust: rootOfTrustOf(rot) } : {}),
    ...(appId ? { applicationId: applicationIdOf(appId) } : {}),
  };
}

/** The key description in `extension` (the extension's OCTET STRING content); throws `DerError`. */
export function parseKeyDescription(extension: Buffer): KeyDescription {
  const f = sequenceOf(parseDer(extension));
  if (f.length < 8) throw new DerError('key description has fewer than 8 fields');
  octets(f[5]); // uniqueId
  return {
    attestationVersion: smallUint(f[0]),
    attestationSecurityLevel: smallUint(f[1], TAG_ENUMERATED),
    keyMintVersion: smallUint(f[2]),
    keyMintSecurityLevel: smallUint(f[3], TAG_ENUMERATED),
    attestationChallenge: octets(f[4]),
    softwareEnforced: authorizationListOf(f[6]),
    hardwareEnforced: authorizationListOf(f[7]),
  };
}
