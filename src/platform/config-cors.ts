/**
 * CORS_ORIGINS and CORS_MAX_AGE_SECONDS: which web origins may call the service from a browser
 * (src/platform/http/cors.ts). Read by config.ts, the only module that reads the environment.
 */

export interface CorsConfig {
  /** Exact origins (`https://app.bank.example`), or `*` (outside production only). Empty: CORS off, no CORS header at all. */
  readonly origins: readonly string[] | '*';
  /** CORS_MAX_AGE_SECONDS: how long a browser may reuse a preflight's answer (`Access-Control-Max-Age`). */
  readonly maxAgeSec: number;
}

/** An origin as a browser sends it: scheme, host and port if not the default; no path, no trailing slash. */
function originProblem(entry: string): string | undefined {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return `"${entry.slice(0, 100)}" is not an origin such as https://app.bank.example`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `"${entry.slice(0, 100)}" must use https:// (or http://)`;
  if (url.origin !== entry) return `"${entry.slice(0, 100)}" must be an exact origin, scheme://host[:port] with no path, query or trailing slash (such as ${url.origin})`;
  return undefined;
}

/**
 * CORS_ORIGINS: comma-separated exact origins; unset or empty turns CORS off. `*` (any origin)
 * is for development: refused in production, where a bank's web app names its origins.
 */
export function readCorsEnv(opt: (name: string) => string | undefined, problems: string[], production: boolean, int: (name: string, fallback: number, min: number, max: number) => number): CorsConfig {
  const maxAgeSec = int('CORS_MAX_AGE_SECONDS', 600, 0, 86_400);
  const entries = (opt('CORS_ORIGINS') ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.includes('*')) {
    if (entries.length > 1) problems.push('CORS_ORIGINS must be either * or a list of origins, not both');
    if (production) problems.push('CORS_ORIGINS=* would let a page on any web site call the service from its visitors\' browsers; in production list the web apps\' exact origins, comma-separated (such as CORS_ORIGINS=https://app.bank.example,https://admin.bank.example)');
    return Object.freeze({ origins: '*', maxAgeSec });
  }
  for (const e of entries) {
    const problem = originProblem(e);
    if (problem) problems.push(`CORS_ORIGINS: ${problem}`);
    else if (production && e.startsWith('http://')) problems.push(`CORS_ORIGINS: "${e}" must use https:// in production`);
  }
  return Object.freeze({ origins: Object.freeze([...new Set(entries)]), maxAgeSec });
}
