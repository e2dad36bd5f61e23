/**
 * Starts a real SAML 2.0 identity provider for the suites: Debian's SimpleSAMLphp 1.19 under PHP's
 * built-in web server (`php -S 127.0.0.1:<port> -t /usr/share/simplesamlphp/www`), plus a
 * browser-like driver (fetch with `redirect: 'manual'` and a cookie jar) that signs in at it.
 *
 * Nothing under /usr/share/simplesamlphp or /etc/simplesamlphp is touched: SIMPLESAMLPHP_CONFIG_DIR
 * points at a temporary directory holding config.php, authsources.php (`exampleauth:UserPass` with
 * the given users; `uid` = username), metadata/saml20-idp-hosted.php, cert/ (an RSA-2048 key pair
 * made by `openssl`), sp.xml (the SP's metadata, an XML metadata source, rewritten by
 * setSpMetadata and re-read on every request), and writable tmp, data, log and PHP session dirs
 * (`store.type` phpsession). `baseurlpath` is the full http://127.0.0.1:<port>/ URL.
 *
 * What the IdP does (checked against modules/saml/lib/IdP/SAML2.php and modules/saml/lib/Message.php):
 * - `saml20.sign.response` and `saml20.sign.assertion` (IdP-hosted metadata; the SP's entry could
 *   override them, but XML metadata cannot carry them): both signed, `signature.algorithm`
 *   rsa-sha256; the saml2 library derives the digest from it (SHA-256), exclusive c14n, and embeds
 *   the signing certificate in KeyInfo.
 * - NameID: authproc `saml:AttributeNameID` from `uid`, Format persistent, so the NameID value is
 *   the username (stable across restarts), with SPNameQualifier = the SP's entity id (no
 *   NameQualifier). A request for another format (or none, IdP-initiated) falls back to the SP
 *   metadata's first NameIDFormat, then the IdP's (persistent): transient only if one of those says so.
 * - AuthnStatement carries a random SessionIndex; `sign.logout`: LogoutRequests and
 *   LogoutResponses it sends are signed (HTTP-Redirect: SigAlg + Signature in the query; POST: an
 *   enveloped signature). It sends to the SP's SingleLogoutService preferring HTTP-Redirect over
 *   HTTP-POST (SAML2::sendLogoutRequest), with the `traditional` logout handler.
 * - AuthnRequests need no signature (`validate.authnrequest` and `redirect.validate` unset).
 * - Attributes: NameFormat basic, names from `attributeNames`, multi-valued groups.
 *
 * Installs Debian's simplesamlphp, php-cli, php-xml (dom, SimpleXML) and php-mbstring with
 * aptInstall when missing. Caveats: the `simplesamlphp` package depends on `apache2 | httpd`, so apt
 * also installs Apache (and, on a host with a running init system, starts it on port 80; unused
 * here). Usernames cannot contain ':' (exampleauth splits "user:password" at the first colon).
 * `php -S` runs PHP_CLI_SERVER_WORKERS=4 forked workers in its own process group, which stop()
 * kills as a whole. PHP's stderr (access log, warnings) and SimpleSAMLphp's debug log (which
 * includes every SAML message, `debug.saml`) are in `log()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { aptInstall } from './apt.js';
import { selfSignedCertificate } from './certificates.js';
import { freePort } from './postgres.js';

const SSP = '/usr/share/simplesamlphp';
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

export interface IdpUser {
  username: string;
  password: string;
  email?: string;
  displayName?: string;
  groups?: string[];
  branch?: string;
  phone?: string;
}

type AttributeKey = 'email' | 'displayName' | 'groups' | 'branch' | 'phone';

export interface IdpOptions {
  users: IdpUser[];
  /** The SP's metadata XML (GET /api/v1/auth/saml/metadata), loaded as an XML metadata source: entity id, ACS, SLS. */
  spMetadataXml: string;
  /** Release attributes under these names (default: email, displayName, groups, branch, phone; Basic name format). `uid` is always released. */
  attributeNames?: Partial<Record<AttributeKey, string>>;
}

export type IdpPage =
  | { kind: 'post'; action: string; fields: Record<string, string> }
  | { kind: 'redirect'; url: string }
  | { kind: 'page'; status: number; html: string };

export interface IdpBrowser {
  /**
   * Like a browser: GET `url`, follow redirects (and auto-submitting forms) while they stay on the
   * IdP's origin, fill and submit the login form once with `credentials` when it appears, and stop
   * when the IdP hands the browser to another origin: an auto-submitting form ('post', entities
   * decoded) or a redirect ('redirect'). Any other page: 'page'. Cookies persist across calls.
   */
  visit(url: string, credentials?: { username: string; password: string }): Promise<IdpPage>;
  /** POST a form to an IdP URL (e.g. a LogoutResponse by HTTP-POST binding), then as visit. */
  post(url: string, fields: Record<string, string>): Promise<IdpPage>;
  /** IdP-initiated sign-in to the SP (saml2/idp/SSOService.php?spentityid=...&RelayState=...). */
  idpInitiated(spEntityId: string, credentials: { username: string; password: string }, relayState?: string): Promise<IdpPage>;
  /** IdP-initiated logout of this browser's IdP session: the page handing the browser to the SP's SLS with a LogoutRequest. */
  startLogout(): Promise<IdpPage>;
}

export interface RunningIdp {
  /** http://127.0.0.1:<port>/ */
  baseUrl: string;
  /** The IdP's entity id (Issuer): <baseUrl>saml2/idp/metadata.php, which also serves its metadata. */
  entityId: string;
  /** SingleSignOnService (HTTP-Redirect and HTTP-POST bindings). */
  ssoUrl: string;
  /** SingleLogoutService (HTTP-Redirect). */
  sloUrl: string;
  certPem: string;
  certBody: string;
  browser(): IdpBrowser;
  /** Replace the SP metadata (read again on the next request). */
  setSpMetadata(xml: string): void;
  /** SimpleSAMLphp's log (debug level, SAML messages included), then php -S's stderr. */
  log(): string;
  stop(): Promise<void>;
}

/** A PHP literal for a JSON-like value (single-quoted strings: only \\ and \' are escapes). */
function php(value: unknown, indent = ''): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value == null) return 'null';
  const inner = `${indent}  `;
  const items = Array.isArray(value)
    ? value.map((v) => `${inner}${php(v, inner)}`)
    : Object.entries(value).map(([k, v]) => `${inner}${php(k)} => ${php(v, inner)}`);
  return `[\n${items.join(',\n')}\n${indent}]`;
}

export function ensureSimpleSamlPhpInstalled(): void {
  const present = `test -f ${SSP}/www/index.php && command -v php >/dev/null && php -r 'exit(extension_loaded("dom") && extension_loaded("mbstring") ? 0 : 1);'`;
  aptInstall(['simplesamlphp', 'php-cli', 'php-xml', 'php-mbstring'], present);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    out[m[1]!.toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

interface Form { action: string; method: string; inputs: Array<Record<string, string>> }
function forms(html: string, pageUrl: string): Form[] {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].map((m) => {
    const a = attributes(m[1]!);
    return {
      action: new URL(a.action || pageUrl, pageUrl).toString(),
      method: (a.method ?? 'get').toLowerCase(),
      inputs: [...m[2]!.matchAll(/<input\b[^>]*>/gi)].map((i) => attributes(i[0])),
    };
  });
}

function hiddenFields(form: Form): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const i of form.inputs) if (i.type === 'hidden' && i.name) fields[i.name] = i.value ?? '';
  return fields;
}

function newBrowser(baseUrl: string, sloUrl: string): IdpBrowser {
  const origin = new URL(baseUrl).origin;
  const jar = new Map<string, string>();
  type Step = { url: string; body?: Record<string, string> };

  async function run(first: Step, credentials?: { username: string; password: string }): Promise<IdpPage> {
    let step: Step = first;
    let submitted = false;
    for (let hops = 0; hops < 30; hops++) {
      if (new URL(step.url).origin !== origin) {
        return step.body ? { kind: 'post', action: step.url, fields: step.body } : { kind: 'redirect', url: step.url };
      }
      const headers: Record<string, string> = {};
      if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      if (step.body) headers['content-type'] = 'application/x-www-form-urlencoded';
      const res = await fetch(step.url, { method: step.body ? 'POST' : 'GET', headers, redirect: 'manual', body: step.body ? new URLSearchParams(step.body).toString() : undefined });
      for (const c of res.headers.getSetCookie()) {
        const [pair = '', ...attrs] = c.split(';');
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq).trim();
        const expired = attrs.some((a) => /^\s*max-age\s*=\s*(0|-)/i.test(a) || (/^\s*expires\s*=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
        if (expired) jar.delete(name);
        else jar.set(name, pair.slice(eq + 1).trim());
      }
      const location = res.headers.get('location');
      const html = await res.text();
      if (res.status >= 300 && res.status < 400 && location) {
        step = { url: new URL(location, step.url).toString() };
        continue;
      }
      const all = forms(html, step.url);
      const login = all.find((f) => f.inputs.some((i) => i.name === 'password'));
      if (login && credentials && !submitted) {
        submitted = true;
        step = { url: login.action, body: { ...hiddenFields(login), username: credentials.username, password: credentials.password } };
        continue;
      }
      // SimpleSAMLphp's HTTP-POST page (templates/post.php): a form that a script submits on load.
      const auto = all.find((f) => f.method === 'post' && f.inputs.some((i) => i.id === 'postLoginSubmitButton'));
      if (auto && !login) {
        step = { url: auto.action, body: hiddenFields(auto) };
        continue;
      }
      return { kind: 'page', status: res.status, html };
    }
    throw new Error(`IdP browser: more than 30 hops from ${first.url}`);
  }

  return {
    visit: (url, credentials) => run({ url }, credentials),
    post: (url, fields) => run({ url, body: fields }),
    idpInitiated: (spEntityId, credentials, relayState) => {
      const q = new URLSearchParams({ spentityid: spEntityId, ...(relayState !== undefined ? { RelayState: relayState } : {}) });
      return run({ url: `${baseUrl}saml2/idp/SSOService.php?${q}` }, credentials);
    },
    startLogout: () => run({ url: `${sloUrl}?${new URLSearchParams({ ReturnTo: `${baseUrl}logout.php` })}` }),
  };
}

async function waitUntilReady(child: ChildProcess, url: string, diagnostics: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = '';
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`php -S exited during start-up:\n${diagnostics()}`);
    try {
      const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(5000) });
      const body = await res.text();
      if (res.status === 200 && body.includes('EntityDescriptor')) return;
      last = `HTTP ${res.status}: ${body.slice(0, 2000)}`;
      if (res.status >= 400) throw Object.assign(new Error(last), { fatal: true });
    } catch (err) {
      if ((err as { fatal?: boolean }).fatal) throw new Error(`SimpleSAMLphp refused to serve its metadata (${url}): ${last}\n${diagnostics()}`);
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`SimpleSAMLphp did not answer ${url} within 20 s (${last}):\n${diagnostics()}`);
    await sleep(delay);
  }
}

export async function startIdp(opts: IdpOptions): Promise<RunningIdp> {
  ensureSimpleSamlPhpInstalled();
  for (const u of opts.users) if (u.username.includes(':')) throw new Error(`IdP user "${u.username}": exampleauth:UserPass usernames cannot contain ':'`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-idp-'));
  const sub = (name: string): string => {
    const p = path.join(dir, name);
    mkdirSync(p);
    return p;
  };
  let child: ChildProcess | undefined;
  const kill = (): void => {
    if (child?.pid && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL'); // the group: the master and its forked workers
      } catch { /* already gone */ }
    }
  };
  const killOnExit = (): void => {
    kill();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [configDir, metadataDir, certDir, logDir] = ['config', 'metadata', 'cert', 'log'].map(sub) as [string, string, string, string];
    const [tmpDir, dataDir, sessionDir] = ['tmp', 'data', 'sessions'].map(sub) as [string, string, string];
    const cert = selfSignedCertificate(certDir, 'idp', 30);
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}/`;
    const entityId = `${baseUrl}saml2/idp/metadata.php`;
    const ssoUrl = `${baseUrl}saml2/idp/SSOService.php`;
    const sloUrl = `${baseUrl}saml2/idp/SingleLogoutService.php`;
    const spFile = path.join(dir, 'sp.xml');
    const setSpMetadata = (xml: string): void => writeFileSync(spFile, xml);
    setSpMetadata(opts.spMetadataXml);

    const config = {
      baseurlpath: baseUrl, certdir: `${certDir}/`, loggingdir: `${logDir}/`, datadir: `${dataDir}/`, tempdir: tmpDir,
      metadatadir: `${metadataDir}/`, attributenamemapdir: `${SSP}/attributemap/`,
      'metadata.sources': [{ type: 'flatfile' }, { type: 'xml', file: spFile }],
      secretsalt: randomBytes(16).toString('hex'), 'auth.adminpassword': randomBytes(16).toString('hex'),
      technicalcontact_name: 'Strongroom tests', technicalcontact_email: 'tests@strongroom.test', timezone: 'UTC',
      'admin.protectindexpage': false, 'admin.protectmetadata': false, 'admin.checkforupdates': false,
      'trusted.url.domains': [], 'enable.saml20-idp': true, 'enable.shib13-idp': false, 'enable.adfs-idp': false,
      'module.enable': { exampleauth: true, core: true, saml: true, admin: true },
      debug: { saml: true, backtraces: true, validatexml: false }, showerrors: true, errorreporting: false,
      'logging.handler': 'file', 'logging.logfile': 'simplesamlphp.log', 'statistics.out': [],
      'store.type': 'phpsession', 'session.phpsession.savepath': sessionDir, 'session.cookie.secure': false,
      'session.cookie.samesite': null, 'language.cookie.secure': false, 'language.cookie.samesite': null,
    };
    writeFileSync(path.join(configDir, 'config.php'), `<?php\n$config = ${php(config)};\n$config['logging.level'] = SimpleSAML\\Logger::DEBUG;\n`);

    const names: Record<AttributeKey, string> = { email: 'email', displayName: 'displayName', groups: 'groups', branch: 'branch', phone: 'phone', ...opts.attributeNames };
    const userpass: Record<string, unknown> = { 0: 'exampleauth:UserPass' };
    for (const u of opts.users) {
      const attrs: Record<string, string[]> = { uid: [u.username] };
      for (const key of Object.keys(names) as AttributeKey[]) {
        const v = u[key];
        if (v !== undefined) attrs[names[key]] = Array.isArray(v) ? v : [v];
      }
      userpass[`${u.username}:${u.password}`] = attrs;
    }
    writeFileSync(path.join(configDir, 'authsources.php'), `<?php\n$config = ${php({ admin: ['core:AdminPassword'], 'example-userpass': userpass })};\n`);

    const hosted = {
      host: '__DEFAULT__', privatekey: 'idp.key', certificate: 'idp.pem', auth: 'example-userpass',
      'signature.algorithm': RSA_SHA256, 'saml20.sign.response': true, 'saml20.sign.assertion': true, 'sign.logout': true,
      'attributes.NameFormat': 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', NameIDFormat: PERSISTENT,
      authproc: { 10: { class: 'saml:AttributeNameID', attribute: 'uid', Format: PERSISTENT } },
    };
    writeFileSync(path.join(metadataDir, 'saml20-idp-hosted.php'), `<?php\n$metadata[${php(entityId)}] = ${php(hosted)};\n`);

    let stderr = '';
    child = spawn('php', [
      '-S', `127.0.0.1:${port}`, '-t', `${SSP}/www`,
      '-d', 'display_errors=0', '-d', 'log_errors=1', '-d', 'error_reporting=E_ALL & ~E_DEPRECATED',
    ], {
      env: { ...process.env, SIMPLESAMLPHP_CONFIG_DIR: configDir, PHP_CLI_SERVER_WORKERS: '4' },
      stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    child.stdout?.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    child.stderr?.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    process.once('exit', killOnExit);
    const proc = child;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const log = (): string => {
      const file = path.join(logDir, 'simplesamlphp.log');
      return `--- SimpleSAMLphp log ---\n${existsSync(file) ? readFileSync(file, 'utf8') : '(none)'}\n--- php -S ---\n${stderr}`;
    };
    await waitUntilReady(proc, entityId, log);

    return {
      baseUrl, entityId, ssoUrl, sloUrl, certPem: cert.pem, certBody: cert.body,
      browser: () => newBrowser(baseUrl, sloUrl),
      setSpMetadata, log,
      stop: async () => {
        process.removeListener('exit', killOnExit);
        kill();
        if (proc.exitCode === null && proc.signalCode === null) await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    process.removeListener('exit', killOnExit);
    killOnExit();
    throw err;
  }
}
