/**
 * A software WebAuthn authenticator for the HTTP suites: an ES256 key pair made with node:crypto,
 * registration answers with attestation `none` (the attestation object CBOR-encoded with
 * @levischuck/tiny-cbor, which @simplewebauthn/server itself uses) and assertions signed over
 * `authenticatorData || SHA-256(clientDataJSON)`, as a platform authenticator with user
 * verification would make them. Its counter, origin and flags can be set to forge what a cloned
 * authenticator or a phishing page would send.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { encodeCBOR } from '@levischuck/tiny-cbor';

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

/** The AAGUID the software authenticator says it is (any 16 bytes; all zeros is "not said"). */
export const SOFT_AAGUID = '5f0c0a1e-7d2b-4c3a-9e8f-0123456789ab';

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const b64u = (data: Buffer | Uint8Array): string => Buffer.from(data).toString('base64url');

interface CreationOptions { challenge: string; rp: { id?: string }; user: { id: string } }
interface RequestOptions { challenge: string; rpId?: string; allowCredentials?: { id: string }[] }

export interface AnswerOptions {
  /** The page's origin the client data names. */
  origin: string;
  /** Overrides the relying-party id hashed into the authenticator data (default: the options'). */
  rpId?: string;
  /** Whether the authenticator verified the user (default true). */
  userVerified?: boolean;
  /** The signature counter to report (default: one more than the last). */
  counter?: number;
  /** Overrides the challenge signed (default: the options'). */
  challenge?: string;
}

export class SoftAuthenticator {
  readonly credentialId: Buffer = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  private userHandle = '';
  /** The counter last reported. */
  counter = 0;

  constructor(private readonly synced = true) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    const jwk = pair.publicKey.export({ format: 'jwk' });
    this.publicJwk = { x: jwk.x!, y: jwk.y! };
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  /** The COSE_Key of the public key (EC2, P-256, ES256). */
  private coseKey(): Uint8Array {
    return encodeCBOR(new Map<number, number | Uint8Array>([
      [1, 2], [3, -7], [-1, 1], [-2, Buffer.from(this.publicJwk.x, 'base64url')], [-3, Buffer.from(this.publicJwk.y, 'base64url')],
    ]));
  }

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private flags(o: AnswerOptions): number {
    return FLAG_UP | (o.userVerified === false ? 0 : FLAG_UV) | (this.synced ? FLAG_BE | FLAG_BS : 0);
  }

  /** The `PublicKeyCredential.toJSON()` of `navigator.credentials.create({publicKey: options})`. */
  register(options: CreationOptions, o: AnswerOptions): Record<string, unknown> {
    this.userHandle = options.user.id;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.from(SOFT_AAGUID.replace(/-/g, ''), 'hex'), idLength, this.credentialId, Buffer.from(this.coseKey())]);
    this.counter = o.counter ?? 0;
    const authData = this.authData(o.rpId ?? options.rp.id ?? 'localhost', this.flags(o) | FLAG_AT, this.counter, attested);
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: o.challenge ?? options.challenge, origin: o.origin, crossOrigin: false });
    const attestationObject = encodeCBOR(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    return {
      id: this.id, rawId: this.id, type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
      response: { clientDataJSON: b64u(Buffer.from(clientData)), attestationObject: b64u(attestationObject), transports: ['internal', 'hybrid'] },
    };
  }

  /** The `PublicKeyCredential.toJSON()` of `navigator.credentials.get({publicKey: options})`. */
  assert(options: RequestOptions, o: AnswerOptions): Record<string, unknown> {
    this.counter = o.counter ?? this.counter + 1;
    const authData = this.authData(o.rpId ?? options.rpId ?? 'localhost', this.flags(o), this.counter);
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: o.challenge ?? options.challenge, origin: o.origin, crossOrigin: false }));
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey); // DER, as authenticators sign
    return {
      id: this.id, rawId: this.id, type: 'public-key', authenticatorAttachment: 'platform', clientExtensionResults: {},
      response: { clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature), userHandle: this.userHandle },
    };
  }
}
