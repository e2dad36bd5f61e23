/**
 * A local stand-in for Firebase Cloud Messaging HTTP v1 and Google's OAuth2 token endpoint
 * (issue 14 section 4), speaking their wire protocol, authentication included:
 *
 * - `POST /token`: the JWT-bearer grant (RFC 7523). It checks the assertion as Google does: RS256
 *   under the service account's own public key (the `kid` must name it), `iss` the account's
 *   email, `aud` this endpoint's URL, the firebase.messaging scope, `iat` not in the future and at
 *   most an hour before `exp`, `exp` not past. It answers `{access_token, expires_in, token_type}`.
 * - `POST /v1/projects/{project}/messages:send`: a bearer token it issued, the project of the
 *   service account, a message with a token, a notification (title, body, optional image) and
 *   string-only `data`. It answers `{name}`, or the error FCM gives, with its FcmError detail, for
 *   a token told to fail (`fail(token, code)`), or never (`hang(token)`).
 *
 * The service account's key is made here and written as the JSON key file the service reads.
 */
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export type FcmErrorCode = 'UNREGISTERED' | 'INVALID_ARGUMENT' | 'SENDER_ID_MISMATCH' | 'QUOTA_EXCEEDED' | 'UNAVAILABLE' | 'INTERNAL' | 'THIRD_PARTY_AUTH_ERROR';

const STATUS: Record<FcmErrorCode, [number, string]> = {
  UNREGISTERED: [404, 'NOT_FOUND'],
  INVALID_ARGUMENT: [400, 'INVALID_ARGUMENT'],
  SENDER_ID_MISMATCH: [403, 'PERMISSION_DENIED'],
  QUOTA_EXCEEDED: [429, 'RESOURCE_EXHAUSTED'],
  UNAVAILABLE: [503, 'UNAVAILABLE'],
  INTERNAL: [500, 'INTERNAL'],
  THIRD_PARTY_AUTH_ERROR: [401, 'UNAUTHENTICATED'],
};

export interface SentMessage {
  token: string;
  notification: { title: string; body: string; image?: string };
  data?: Record<string, string>;
}

export interface FakeFcm {
  url: string;
  projectId: string;
  /** The service account key file (PUSH_CREDENTIALS_PATH). */
  credentialsPath: string;
  /** Env for createTestApp. */
  env: Record<string, string>;
  /** Messages accepted, in order. */
  sent: SentMessage[];
  /** Token grants: accepted and refused (with why). */
  grants: { accepted: number; refused: string[] };
  /** Sends refused for a bad bearer token. */
  unauthorised: number;
  /** `token` gets `code` (on every send until `clear`), with `Retry-After` when given. */
  fail(token: string, code: FcmErrorCode, retryAfterSec?: number): void;
  /** Sends to `token` never get an answer. */
  hang(token: string): void;
  clear(): void;
  /** Forgets every access token it issued (as if they expired early). */
  revokeAccessTokens(): void;
  /** A key file for the same account signed by another key (a stolen email, a forged assertion). */
  forgedCredentialsPath(): string;
  close(): Promise<void>;
}

const b64json = (s: string): Record<string, unknown> => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>;

function keyFile(dir: string, name: string, account: Record<string, string>): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify({ type: 'service_account', ...account }), { mode: 0o600 });
  return file;
}

export async function startFakeFcm(): Promise<FakeFcm> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-fcm-'));
  const projectId = 'strongroom-test';
  const clientEmail = 'push-sender@strongroom-test.iam.gserviceaccount.com';
  const keyId = randomBytes(20).toString('hex');
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const issued = new Set<string>();
  const behaviour = new Map<string, { code: FcmErrorCode; retryAfterSec?: number } | 'hang'>();
  const hanging = new Set<http.ServerResponse>();
  const sent: SentMessage[] = [];
  const grants = { accepted: 0, refused: [] as string[] };
  let unauthorised = 0;
  let counter = 0;
  let base = '';

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
  const googleError = (res: http.ServerResponse, code: FcmErrorCode, retryAfterSec?: number, onToken = false): void => {
    const [status, rpc] = STATUS[code];
    // What FCM sends for a bad token: the FcmError detail and only its message naming the token.
    const details: unknown[] = [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: code }];
    const message = onToken ? 'The registration token is not a valid FCM registration token' : code === 'INVALID_ARGUMENT' ? 'Request contains an invalid argument.' : `fake FCM: ${code}`;
    json(res, status, { error: { code: status, message, status: rpc, details } }, retryAfterSec === undefined ? {} : { 'retry-after': String(retryAfterSec) });
  };

  /** Why the assertion is refused, or undefined when it is good. */
  const checkAssertion = (assertion: string, key: KeyObject): string | undefined => {
    const parts = assertion.split('.');
    if (parts.length !== 3) return 'not a JWT';
    const [h, c, s] = parts as [string, string, string];
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = b64json(h);
      claims = b64json(c);
    } catch {
      return 'not JSON';
    }
    if (header.alg !== 'RS256') return 'alg is not RS256';
    if (header.kid !== keyId) return 'unknown kid';
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${c}`), key, Buffer.from(s, 'base64url'))) return 'bad signature';
    const now = Math.floor(Date.now() / 1000);
    if (claims.iss !== clientEmail) return 'iss is not the service account';
    if (claims.aud !== `${base}/token`) return 'aud is not the token endpoint';
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes('https://www.googleapis.com/auth/firebase.messaging')) return 'scope lacks firebase.messaging';
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return 'iat or exp missing';
    if (claims.iat > now + 300) return 'iat in the future';
    if (claims.exp <= now - 300) return 'expired';
    if (claims.exp - claims.iat > 3600) return 'lifetime over an hour';
    return undefined;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'POST' && req.url === '/token') {
        const form = new URLSearchParams(text);
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return json(res, 400, { error: 'unsupported_grant_type' });
        const why = checkAssertion(form.get('assertion') ?? '', publicKey);
        if (why) {
          grants.refused.push(why);
          return json(res, 400, { error: 'invalid_grant', error_description: why });
        }
        grants.accepted++;
        const token = `ya29.${randomBytes(24).toString('base64url')}`;
        issued.add(token);
        return json(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
      }
      const m = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(req.url ?? '');
      if (req.method === 'POST' && m) {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!bearer || !issued.has(bearer)) {
          unauthorised++;
          return json(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
        }
        if (decodeURIComponent(m[1]!) !== projectId) return json(res, 403, { error: { code: 403, message: 'wrong project', status: 'PERMISSION_DENIED' } });
        let message: SentMessage;
        try {
          message = (JSON.parse(text) as { message: SentMessage }).message;
        } catch {
          return json(res, 400, { error: { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' } });
        }
        const dataOk = message?.data === undefined || Object.values(message.data).every((v) => typeof v === 'string');
        if (typeof message?.token !== 'string' || typeof message.notification?.title !== 'string' || typeof message.notification?.body !== 'string' || !dataOk) {
          return googleError(res, 'INVALID_ARGUMENT');
        }
        const b = behaviour.get(message.token);
        if (b === 'hang') {
          hanging.add(res);
          return undefined;
        }
        if (b) return googleError(res, b.code, b.retryAfterSec, b.code === 'INVALID_ARGUMENT');
        sent.push(message);
        return json(res, 200, { name: `projects/${projectId}/messages/0:${++counter}` });
      }
      return json(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const account = { project_id: projectId, private_key_id: keyId, client_email: clientEmail, token_uri: `${base}/token` };
  const credentialsPath = keyFile(dir, 'service-account.json', { ...account, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() });

  return {
    url: base, projectId, credentialsPath, sent, grants,
    get unauthorised() {
      return unauthorised;
    },
    env: { PUSH_PROJECT_ID: projectId, PUSH_CREDENTIALS_PATH: credentialsPath, PUSH_API_URL: base },
    fail: (token, code, retryAfterSec) => void behaviour.set(token, { code, ...(retryAfterSec === undefined ? {} : { retryAfterSec }) }),
    hang: (token) => void behaviour.set(token, 'hang'),
    clear: () => behaviour.clear(),
    revokeAccessTokens: () => issued.clear(),
    forgedCredentialsPath: () => {
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      return keyFile(dir, 'forged.json', { ...account, private_key: other.export({ type: 'pkcs8', format: 'pem' }).toString() });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  } satisfies FakeFcm;
}
