/**
 * WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME and WEBAUTHN_ORIGINS: who the passkeys (src/passkeys) belong
 * to. Read by config.ts, the only module that reads the environment; every problem stops
 * start-up with the others, naming the setting.
 *
 * The relying-party id is a domain (`bank.example`): a passkey made for it works on that domain
 * and its subdomains, and nowhere else. The origins are where the answers may come from: the web
 * apps (`https://app.bank.example`), and the mobile apps as their platform names them
 * (`android:apk-key-hash:<base64url of the signing certificate's SHA-256>`; an iOS app answers
 * with the https origin of its associated domain).
 */

export interface WebAuthnConfig {
  /** WEBAUTHN_RP_ID: the relying party's domain. */
  readonly rpId: string;
  /** WEBAUTHN_RP_NAME: the name the device shows when it asks to make or use a passkey. */
  readonly rpName: string;
  /** WEBAUTHN_ORIGINS: the exact origins an answer may come from. */
  readonly origins: readonly string[];
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const ANDROID = /^android:apk-key-hash:[A-Za-z0-9_-]{43}$/;

/** Why `entry` is not an origin an answer may come from, or undefined. */
export function webAuthnOriginProblem(entry: string, production: boolean): string | undefined {
  if (entry.startsWith('android:')) return ANDROID.test(entry) ? undefined : `"${entry.slice(0, 100)}" must be android:apk-key-hash: followed by the base64url SHA-256 of the app's signing certificate (43 characters)`;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return `"${entry.slice(0, 100)}" is not an origin such as https://app.bank.example`;
  }
  if (url.origin !== entry) return `"${entry.slice(0, 100)}" must be an exact origin, scheme://host[:port] with no path or trailing slash (such as ${url.origin})`;
  if (url.protocol === 'https:') return undefined;
  // http://localhost is a secure context to browsers, and reachable from this machine only.
  if (url.protocol === 'http:' && (!production || url.hostname === 'localhost')) return undefined;
  return `"${entry.slice(0, 100)}" must use https://${production ? ' in production (http:// only for localhost)' : ' (or http:// outside production)'}`;
}

/**
 * In development and tests each setting has a default: the RP id `localhost`, the name
 * `Strongroom`, and the service's own `http://localhost:PORT`. Production names all three.
 */
export function readWebAuthnEnv(opt: (name: string) => string | undefined, problems: string[], production: boolean, port: number): WebAuthnConfig {
  const rawId = opt('WEBAUTHN_RP_ID');
  const rawOrigins = opt('WEBAUTHN_ORIGINS');
  const rpName = opt('WEBAUTHN_RP_NAME')?.trim();
  if (production) {
    const missing = [rawId === undefined ? 'WEBAUTHN_RP_ID (the domain passkeys belong to, such as bank.example)' : null,
      rpName === undefined ? 'WEBAUTHN_RP_NAME (the name devices show, such as Example Bank)' : null,
      rawOrigins === undefined ? 'WEBAUTHN_ORIGINS (the web and app origins passkeys are used from, comma-separated, such as https://app.bank.example,android:apk-key-hash:...)' : null].filter((m) => m !== null);
    for (const m of missing) problems.push(`production requires ${m}`);
  }
  const rpId = (rawId ?? 'localhost').trim().toLowerCase();
  if (!DOMAIN.test(rpId)) problems.push(`WEBAUTHN_RP_ID must be a domain name such as bank.example (no scheme, port or path); got "${rpId.slice(0, 100)}"`);
  if (rpName !== undefined && (rpName === '' || rpName.length > 64)) problems.push('WEBAUTHN_RP_NAME must be 1 to 64 characters');
  const origins = (rawOrigins ?? `http://localhost:${port}`).split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (origins.length === 0) problems.push('WEBAUTHN_ORIGINS must name at least one origin');
  for (const o of origins) {
    const problem = webAuthnOriginProblem(o, production);
    if (problem) problems.push(`WEBAUTHN_ORIGINS: ${problem}`);
  }
  return Object.freeze({ rpId, rpName: rpName ?? 'Strongroom', origins: Object.freeze([...new Set(origins)]) });
}
