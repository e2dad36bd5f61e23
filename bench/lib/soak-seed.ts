/**
 * What `npm run soak` sets up before its load, through the API as an operator would: the bench's
 * 5,000 FAQ articles (one administrator import), and a few hundred customers, each created by
 * the administrator and given a password through the forced change; every `totpEvery`-th enrols
 * an authenticator (scanning the QR code with the test suite's `Authenticator`), every
 * `devicesEvery`-th registers phones for push. Sign-ins here run at the service's BCRYPT_COST,
 * so seeding takes a few bcrypt checks per customer.
 */
import { Authenticator } from '../../test/harness/authenticator.js';
import { login, postJson } from './api.js';
import { benchArticles, FAQ_ARTICLES } from './faq.js';

/** One password for every seeded customer (each still has a bcrypt hash of its own). */
export const SOAK_PASSWORD = 'Qm8#vRt2!kLp7$wZ';

export interface SoakUser {
  username: string;
  uuid: string;
  /** The customer's authenticator app, when TOTP is enrolled. */
  authenticator?: Authenticator;
  /** The last TOTP step used (a code works once: the next sign-in needs a later step). */
  lastStep: number;
  /** Push devices registered. */
  devices: number;
  /** A session of this customer is running (the load starts one at a time per customer). */
  busy: boolean;
}

export interface SeedOptions {
  /** Base URLs of the nodes; the work is spread over them. */
  bases: string[];
  adminToken: string;
  users: number;
  totpEvery: number;
  devicesEvery: number;
  devicesPerUser: number;
  /** Customers set up at once. */
  concurrency: number;
}

export const totpStep = (ms: number): number => Math.floor(ms / 30_000);

/** The 5,000 articles of the FAQ bench row, imported in one administrator request; how many were created. */
export async function importFaqArticles(base: string, adminToken: string): Promise<number> {
  const r = await postJson(`${base}/api/v1/admin/faqs/import`, { faqs: benchArticles(FAQ_ARTICLES) }, adminToken);
  if (r.status !== 200) throw new Error(`FAQ import: ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
  return r.json.created as number;
}

/** A customer created by the administrator, its temporary password changed to SOAK_PASSWORD; its uuid. */
async function createCustomer(base: string, adminToken: string, username: string): Promise<string> {
  const created = await postJson(`${base}/api/v1/admin/users`, { username, roles: ['customer'] }, adminToken);
  if (created.status !== 201) throw new Error(`create ${username}: ${created.status} ${JSON.stringify(created.json)}`);
  const first = await postJson(`${base}/api/v1/auth/login`, { username, password: created.json.temporary_password });
  const resetToken = (first.json.details as { reset_token?: string } | undefined)?.reset_token;
  if (first.status !== 403 || !resetToken) throw new Error(`first sign-in of ${username}: ${first.status} ${JSON.stringify(first.json)}`);
  const changed = await postJson(`${base}/api/v1/auth/reset/password`, { reset_token: resetToken, new_password: SOAK_PASSWORD });
  if (changed.status !== 200) throw new Error(`password change of ${username}: ${changed.status} ${JSON.stringify(changed.json)}`);
  return (created.json.user as { uuid: string }).uuid;
}

/** TOTP setup and its first code, as the enrolment in the app does. */
async function enrolTotp(base: string, accessToken: string, user: SoakUser): Promise<void> {
  const setup = await postJson(`${base}/api/v1/2fa/totp/setup`, { current_password: SOAK_PASSWORD }, accessToken);
  if (setup.status !== 200) throw new Error(`TOTP setup of ${user.username}: ${setup.status} ${JSON.stringify(setup.json)}`);
  const authenticator = Authenticator.scan(setup.json.qr_code as string);
  const now = Date.now();
  const verify = await postJson(`${base}/api/v1/2fa/totp/verify`, { code: authenticator.code(now) }, accessToken);
  if (verify.status !== 200) throw new Error(`TOTP verify of ${user.username}: ${verify.status} ${JSON.stringify(verify.json)}`);
  user.authenticator = authenticator;
  user.lastStep = totpStep(now);
}

/** An FCM-like registration token (about 150 characters), distinct per customer and device. */
function pushToken(i: number, d: number): string {
  return `soak${i}d${d}:APA91b${Buffer.from(`${i}-${d}-${'y'.repeat(100)}`).toString('base64url')}`;
}

async function setUp(o: SeedOptions, i: number): Promise<SoakUser> {
  const base = o.bases[i % o.bases.length]!;
  const username = `soak.customer${String(i).padStart(4, '0')}`;
  const user: SoakUser = { username, uuid: await createCustomer(base, o.adminToken, username), lastStep: -1, devices: 0, busy: false };
  const totp = i % o.totpEvery === 0;
  const devices = i % o.devicesEvery === 0 ? o.devicesPerUser : 0;
  if (!totp && devices === 0) return user;
  const tokens = await login(base, username, SOAK_PASSWORD);
  if (totp) await enrolTotp(base, tokens.access_token, user);
  for (let d = 0; d < devices; d++) {
    const r = await postJson(`${base}/api/v1/notifications/devices/register`, { push_token: pushToken(i, d), platform: d % 2 === 0 ? 'mobile' : 'web', device_name: `Phone ${d + 1}` }, tokens.access_token);
    if (r.status !== 201) throw new Error(`register device ${d} of ${username}: ${r.status} ${JSON.stringify(r.json)}`);
    user.devices++;
  }
  const out = await postJson(`${base}/api/v1/auth/logout`, {}, tokens.access_token);
  if (out.status !== 200) throw new Error(`logout of ${username}: ${out.status} ${JSON.stringify(out.json)}`);
  return user;
}

/** The customers, `concurrency` set up at once, in index order. */
export async function seedCustomers(o: SeedOptions, progress?: (done: number) => void): Promise<SoakUser[]> {
  const users: SoakUser[] = new Array<SoakUser>(o.users);
  let next = 0;
  let done = 0;
  await Promise.all(Array.from({ length: o.concurrency }, async () => {
    while (next < o.users) {
      const i = next++;
      users[i] = await setUp(o, i);
      if (++done % 50 === 0) progress?.(done);
    }
  }));
  return users;
}
