/**
 * The push provider (SPEC: PUSH_PROJECT_ID, PUSH_CREDENTIALS_PATH; issue 14): Firebase Cloud
 * Messaging HTTP v1, authenticated with a service account's JSON key (the OAuth2 JWT-bearer grant
 * at the key's own `token_uri`), at PUSH_API_URL (the public endpoint by default, so that tests
 * and private gateways can stand in). Read by config.ts, the only module that reads the
 * environment. The private key stays in this object: never logged, never answered.
 */
import { createPrivateKey } from 'node:crypto';

export interface ServiceAccount {
  /** The key file's `project_id`, when it has one. */
  projectId?: string;
  clientEmail: string;
  privateKeyId: string;
  privateKeyPem: string;
  tokenUri: string;
}

export interface PushConfig {
  /** Both set, or push is not configured (sending answers 503 PUSH_NOT_CONFIGURED). */
  projectId?: string;
  credentials?: ServiceAccount;
  apiUrl: string;
  /** How long one call to the provider (token or send) may take. */
  timeoutMs: number;
  /**
   * PUSH_DEV_OUTBOX: with no provider configured, messages are "sent" to the log (the
   * development outbox, as one-time codes are without SMTP or an SMS gateway). On by default
   * outside production; refused in production.
   */
  devOutbox: boolean;
}

const DEFAULT_PUSH_API_URL = 'https://fcm.googleapis.com';
const PROJECT_ID = /^[a-z][a-z0-9-]{4,61}[a-z0-9]$/;

function url(raw: string, name: string, production: boolean, problems: string[]): string | undefined {
  if (!URL.canParse(raw)) {
    problems.push(`${name} must be a URL (the value given does not parse)`);
    return undefined;
  }
  const u = new URL(raw);
  if (production && u.protocol !== 'https:') problems.push(`${name} must be https:// in production`);
  else if (u.protocol !== 'https:' && u.protocol !== 'http:') problems.push(`${name} must be an http(s) URL`);
  return raw.replace(/\/+$/, '');
}

/** The service account JSON, checked; problems name the file's field, never its secret. */
export function parseServiceAccount(text: string, where: string, production: boolean, problems: string[]): ServiceAccount | undefined {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    problems.push(`${where} is not JSON (a service account key file from the provider's console is)`);
    return undefined;
  }
  if (json.type !== 'service_account') problems.push(`${where}: "type" must be "service_account"`);
  const str = (k: string): string | undefined => (typeof json[k] === 'string' && json[k] !== '' ? (json[k] as string) : undefined);
  const clientEmail = str('client_email');
  const privateKeyId = str('private_key_id');
  const privateKeyPem = str('private_key');
  const tokenUri = str('token_uri');
  if (!clientEmail) problems.push(`${where}: "client_email" is missing`);
  if (!privateKeyId) problems.push(`${where}: "private_key_id" is missing`);
  if (!tokenUri) problems.push(`${where}: "token_uri" is missing`);
  if (!privateKeyPem) problems.push(`${where}: "private_key" is missing`);
  else {
    try {
      const key = createPrivateKey(privateKeyPem);
      if (key.asymmetricKeyType !== 'rsa') problems.push(`${where}: "private_key" must be an RSA key (RS256)`);
    } catch {
      problems.push(`${where}: "private_key" is not a PEM private key`);
    }
  }
  const token = tokenUri === undefined ? undefined : url(tokenUri, `${where}: "token_uri"`, production, problems);
  if (!clientEmail || !privateKeyId || !privateKeyPem || !token) return undefined;
  const projectId = str('project_id');
  return { ...(projectId === undefined ? {} : { projectId }), clientEmail, privateKeyId, privateKeyPem, tokenUri: token };
}

/** How the configuration reads a number or a 1/0 switch (and reports a bad one in `problems`). */
export interface EnvReaders {
  int(name: string, fallback: number, min: number, max: number): number;
  bool(name: string, fallback: boolean): boolean;
}

export function readPushEnv(opt: (name: string) => string | undefined, readFile: (file: string) => string, problems: string[], production: boolean, read: EnvReaders): PushConfig {
  const projectId = opt('PUSH_PROJECT_ID');
  const path = opt('PUSH_CREDENTIALS_PATH');
  const apiUrl = url(opt('PUSH_API_URL') ?? DEFAULT_PUSH_API_URL, 'PUSH_API_URL', production, problems) ?? DEFAULT_PUSH_API_URL;
  const devOutbox = read.bool('PUSH_DEV_OUTBOX', !production);
  if (devOutbox && production) problems.push('PUSH_DEV_OUTBOX=1 writes push messages to the log instead of sending them: never in production (configure PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH, or unset it)');
  const base = { apiUrl, timeoutMs: read.int('PUSH_TIMEOUT_MS', 10_000, 100, 60_000), devOutbox: devOutbox && !production };
  if (projectId === undefined && path === undefined) return base;
  if (projectId === undefined || path === undefined) {
    problems.push(`push needs both PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH (${projectId === undefined ? 'PUSH_PROJECT_ID' : 'PUSH_CREDENTIALS_PATH'} is unset)`);
    return base;
  }
  if (!PROJECT_ID.test(projectId)) problems.push('PUSH_PROJECT_ID must be a project id: 6 to 63 lower-case letters, digits and hyphens, starting with a letter');
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    problems.push(`PUSH_CREDENTIALS_PATH: ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return base;
  }
  const credentials = parseServiceAccount(text, `PUSH_CREDENTIALS_PATH (${path})`, production, problems);
  // A key of another project would be refused at the first send; say so now.
  if (credentials?.projectId !== undefined && credentials.projectId !== projectId) problems.push(`PUSH_PROJECT_ID (${projectId}) is not the key file's project_id (${credentials.projectId}): use the key of that project, or its id`);
  return credentials ? { ...base, projectId, credentials } : base;
}
