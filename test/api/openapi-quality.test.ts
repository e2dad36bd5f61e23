/**
 * The OpenAPI document as a client generator needs it (issue 25 section 3): every error status
 * with its codes and an example, named and exemplified bodies, every header the service reads
 * declared, no reference to documents outside the repository; and a client generated from it
 * with openapi-typescript typechecks against the SDK's calls (packages/client).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { declaredHeaders, qualityProblems, type OpenApiOperation } from '../harness/openapi-quality.js';

type Doc = Record<string, unknown> & { paths: Record<string, Record<string, OpenApiOperation>> };

let t: TestApp;
let doc: Doc;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json() as Doc;
});
afterAll(async () => t.close());

const operations = (): Array<{ at: string; path: string; op: OpenApiOperation }> =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, path, op })));

/** The request headers the service's code reads, by name (src/**, not tests). */
function headersReadInSource(): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/headers\[\s*['"]([a-z0-9-]+)['"]\s*\]|request\.headers\.([a-z]+)\b/g)) out.add(m[1] ?? m[2]!);
        for (const m of text.matchAll(/_HEADER\s*=\s*'([a-z0-9-]+)'/g)) out.add(m[1]!);
      }
    }
  };
  walk(resolve('src'));
  return out;
}

/** Headers read that are not the API's to declare: HTTP's own, CORS (the browser's), the browser's cookie of a SAML sign-in, W3C trace context. */
const NOT_DECLARED = new Set(['authorization', 'user-agent', 'content-type', 'cookie', 'traceparent', 'tracestate', 'accept', 'host', 'origin', 'access-control-request-method', 'access-control-request-headers',
  'accept-encoding', // the console's assets (not part of the API) are sent compressed as the browser accepts
]);

describe('the OpenAPI document a client generator reads', () => {
  it('openapi quality: every error status lists its error codes with an example of its own, every body is a named schema with an example that matches it, no "SPEC" or "ARCHITECTURE"', () => {
    expect(qualityProblems(doc)).toEqual([]);
    expect(operations().length).toBeGreaterThan(100);
  });

  it('openapi quality: no two statuses of a route share one example, and the old generic INVALID_CREDENTIALS example is gone from other routes', () => {
    let compared = 0;
    for (const { at, op } of operations()) {
      const seen = new Map<string, string>();
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (Number(status) < 400) continue;
        const media = response.content?.['application/json'];
        const example = media?.example as { error_code?: string } | undefined;
        if (example === undefined) continue; // not a JSON error body (the quality walk above checks what must have one)
        const key = JSON.stringify(example);
        expect(seen.get(key), `${at} ${status}: the example of ${seen.get(key)} again`).toBeUndefined();
        seen.set(key, status);
        compared++;
        if (example?.error_code === 'INVALID_CREDENTIALS') expect(Number(status), at).toBe(401);
      }
    }
    expect(compared).toBeGreaterThan(500); // every route has several error statuses
    const login = doc.paths['/api/v1/auth/login']!.post!;
    const codes = (status: string) => ((login.responses![status]!.content!['application/json']!.schema!.properties as Record<string, { enum?: string[] }>).error_code!.enum);
    expect(codes('401')).toContain('INVALID_CREDENTIALS');
    expect(codes('401')).toContain('2FA_REQUIRED');
    expect(codes('403')).toEqual(expect.arrayContaining(['PASSWORD_CHANGE_REQUIRED', 'ACCOUNT_DISABLED', 'POLICY_RESTRICTED']));
    expect(codes('429')).toEqual(expect.arrayContaining(['ACCOUNT_LOCKED', 'RATE_LIMITED']));
    expect(codes('422')).toEqual(expect.arrayContaining(['VALIDATION_ERROR', 'ENCRYPTION_REQUIRED']));
  });

  it('openapi quality: a header the service reads is declared: the fingerprint on every guarded and sign-in route, the gateway key on USSD routes, x-encrypted where transport encryption applies; X-Request-ID on every answer', () => {
    const schemes = (doc.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
    expect(Object.keys(schemes)).toEqual(expect.arrayContaining(['bearer', 'gatewayKey']));
    const declaredAnywhere = new Set<string>();
    for (const { at, path, op } of operations()) {
      const declared = declaredHeaders(doc, op);
      declared.forEach((h) => declaredAnywhere.add(h));
      const bearer = (op.security ?? []).some((s) => 'bearer' in s);
      if (bearer || /^\/api\/v1\/(auth|2fa)\//.test(path)) expect(declared.has('x-device-fingerprint'), at).toBe(true);
      if (path.split('/').includes('ussd')) expect(declared.has('x-gateway-key'), at).toBe(true);
      const exempt = path.startsWith('/api/v1/faq/') || path === '/api/v1/auth/public_key' || path === '/api/v1/ws' || path.split('/').includes('ussd') || !path.startsWith('/api/v1/');
      if (!exempt) expect(declared.has('x-encrypted'), at).toBe(true);
      if (path.startsWith('/api/v1/')) expect(declared.has('x-correlation-id'), at).toBe(true);
      for (const [status, response] of Object.entries(op.responses ?? {})) expect((response as { headers?: object }).headers, `${at} ${status}`).toHaveProperty('X-Request-ID');
    }
    const undeclared = [...headersReadInSource()].filter((h) => !NOT_DECLARED.has(h) && !declaredAnywhere.has(h));
    expect(undeclared).toEqual([]);
  });

  it('openapi quality: every operation has a unique operationId', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('a client generated from the document', () => {
  it('openapi-typescript: the generated paths typecheck against the SDK\'s request and answer types (packages/client)', async () => {
    const generated = astToString(await openapiTS(doc as never));
    const dir = mkdtempSync(join(tmpdir(), 'strongroom-openapi-'));
    try {
      writeFileSync(join(dir, 'api.d.ts'), generated);
      const sdk = resolve('packages/client/src/types.ts').replace(/\.ts$/, '');
      const sdkFile = (name: string): string => JSON.stringify(resolve(`packages/client/src/${name}`));
      writeFileSync(join(dir, 'calls.ts'), SDK_CALLS.replace('SDK_TYPES', JSON.stringify(sdk)).replace('SDK_PASSKEYS', sdkFile('passkeys')).replace('SDK_PUSH_APPROVAL', sdkFile('push-approval')));
      const program = ts.createProgram([join(dir, 'calls.ts')], {
        strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
        skipLibCheck: true, types: [], noUnusedLocals: false,
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * What the SDK sends and expects, against the generated `paths`: each answer the document
 * describes is assignable to the SDK's type for it, each body the SDK sends is one the document
 * accepts, and the error codes the SDK matches on are in the document's enums.
 */
const SDK_CALLS = `
import type { paths } from './api';
import type { CodeSent, LogoutResponse, PasswordChangedResponse, PublicKeyInfo, SignInResponse, ValidateResponse } from SDK_TYPES;
import type { Passkey, PasskeyAssertionJSON, PasskeyChallenge, PasskeyRegistrationJSON, RegisteredPasskey, StepUpResponse } from SDK_PASSKEYS;
import type { PushApprovalSent } from SDK_PUSH_APPROVAL;

type Op<P extends keyof paths, M extends keyof paths[P]> = paths[P][M];
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> =
  Op<P, M> extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;
type Body<P extends keyof paths, M extends keyof paths[P]> =
  Op<P, M> extends { requestBody: { content: { 'application/json': infer B } } } ? B
  : Op<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** A path, method or status the document lacks would make an answer \`never\`, which any type accepts: refused here. */
type Present<T> = [T] extends [never] ? 'missing from the document' : T;
type Code<P extends keyof paths, M extends keyof paths[P], S extends number> = Present<Answer<P, M, S>> extends { error_code: infer C } ? C : 'missing from the document';

declare function answer<T>(): Present<T>;

export const publicKey: PublicKeyInfo = answer<Answer<'/api/v1/auth/public_key', 'get', 200>>();
export const signIn: SignInResponse = answer<Answer<'/api/v1/auth/login', 'post', 200>>();
export const signInMobile: SignInResponse = answer<Answer<'/api/v1/auth/login/mobile', 'post', 200>>();
export const refreshed: SignInResponse = answer<Answer<'/api/v1/auth/refresh', 'post', 200>>();
export const loggedOut: LogoutResponse = answer<Answer<'/api/v1/auth/logout', 'post', 200>>();
export const validated: Omit<ValidateResponse, never> = answer<Answer<'/api/v1/auth/validate', 'post', 200>>();
export const changed: PasswordChangedResponse = answer<Answer<'/api/v1/auth/password', 'post', 200>>();
export const reset: PasswordChangedResponse = answer<Answer<'/api/v1/auth/reset/password', 'post', 200>>();
export const totp: SignInResponse = answer<Answer<'/api/v1/2fa/totp/verify-login', 'post', 200>>();
export const backup: SignInResponse = answer<Answer<'/api/v1/2fa/totp/verify-backup-code', 'post', 200>>();
export const sent: CodeSent = answer<Answer<'/api/v1/auth/2fa/request', 'post', 200>>();
export const codeValidated: SignInResponse = answer<Answer<'/api/v1/auth/2fa/validate', 'post', 200>>();

export const loginBody: Body<'/api/v1/auth/login', 'post'> = { username: 'amina.otieno', password: 'secret', device_fingerprint: 'a3f1' };
export const mobileBody: Body<'/api/v1/auth/login/mobile', 'post'> = { username: 'a', password: 'b', device_fingerprint: 'f', channel: 'agent', latitude: -1.2, longitude: 36.8, accuracy_m: 12 };
export const refreshBody: Body<'/api/v1/auth/refresh', 'post'> = { refresh_token: 'r' };
export const logoutBody: Body<'/api/v1/auth/logout', 'post'> = { all_sessions: true };
export const passwordBody: Body<'/api/v1/auth/password', 'post'> = { current_password: 'a', new_password: 'b' };
export const resetBody: Body<'/api/v1/auth/reset/password', 'post'> = { reset_token: 't', new_password: 'b' };
export const totpBody: Body<'/api/v1/2fa/totp/verify-login', 'post'> = { two_factor_token: 't', code: '123456' };
export const requestBody: Body<'/api/v1/auth/2fa/request', 'post'> = { two_factor_token: 't', method: 'sms' };
export const validateBody: Body<'/api/v1/auth/2fa/validate', 'post'> = { two_factor_token: 't', code: '123456' };

// Passkeys and push approval (client.passkeys, signInWithPasskey, stepUpWithPasskey, client.pushApproval).
declare const registration: PasskeyRegistrationJSON;
declare const assertion: PasskeyAssertionJSON;
export const creation: PasskeyChallenge<{ challenge: string }> = answer<Answer<'/api/v1/passkeys/registration/options', 'post', 200>>();
export const registered: RegisteredPasskey = answer<Answer<'/api/v1/passkeys/registration/verify', 'post', 200>>();
export const passkeys: Passkey[] = answer<Answer<'/api/v1/passkeys', 'get', 200>>().passkeys;
export const renamed: Passkey = answer<Answer<'/api/v1/passkeys/{id}', 'patch', 200>>();
export const deleted: { deleted: true; passkeys_left: number } = answer<Answer<'/api/v1/passkeys/{id}', 'delete', 200>>();
export const passkeyOptions: PasskeyChallenge<{ challenge: string }> = answer<Answer<'/api/v1/auth/passkey/options', 'post', 200>>();
export const passkeySignIn: SignInResponse = answer<Answer<'/api/v1/auth/passkey/login', 'post', 200>>();
export const passkeyFactor: SignInResponse = answer<Answer<'/api/v1/auth/passkey/2fa/verify', 'post', 200>>();
export const steppedUp: StepUpResponse = answer<Answer<'/api/v1/auth/passkey/step-up/verify', 'post', 200>>();
export const pushSent: PushApprovalSent = answer<Answer<'/api/v1/auth/push-approval/request', 'post', 200>>();
export const pushApproved: SignInResponse = answer<Answer<'/api/v1/auth/push-approval/complete', 'post', 200>>();
export const setupOptionsBody: Body<'/api/v1/passkeys/registration/options', 'post'> = { two_factor_token: 't' };
export const registerBody: Body<'/api/v1/passkeys/registration/verify', 'post'> = { challenge_id: 'c', name: 'Pixel 8', response: registration, two_factor_token: 't' };
export const passkeyLoginBody: Body<'/api/v1/auth/passkey/login', 'post'> = { challenge_id: 'c', response: assertion, device_fingerprint: 'f' };
export const passkeyFactorBody: Body<'/api/v1/auth/passkey/2fa/verify', 'post'> = { two_factor_token: 't', challenge_id: 'c', response: assertion };
export const stepUpBody: Body<'/api/v1/auth/passkey/step-up/verify', 'post'> = { challenge_id: 'c', response: assertion };
export const pushRequestBody: Body<'/api/v1/auth/push-approval/request', 'post'> = { two_factor_token: 't' };
export const pushCompleteBody: Body<'/api/v1/auth/push-approval/complete', 'post'> = { two_factor_token: 't', request_id: 'r', wait_seconds: 25 };
export const setUpFirst: Code<'/api/v1/auth/login', 'post', 403> = 'MFA_SETUP_INCOMPLETE';
export const stepUpFirst: Code<'/api/v1/passkeys/{id}', 'delete', 403> = 'STEP_UP_REQUIRED';
export const pending: Code<'/api/v1/auth/push-approval/complete', 'post', 409> = 'PUSH_APPROVAL_PENDING';
export const denied: Code<'/api/v1/auth/push-approval/complete', 'post', 403> = 'PUSH_APPROVAL_DENIED';
export const lapsed: Code<'/api/v1/auth/push-approval/complete', 'post', 410> = 'PUSH_APPROVAL_EXPIRED';

// The codes the SDK's callers branch on are in the document's enums.
export const wrongPassword: Code<'/api/v1/auth/login', 'post', 401> = 'INVALID_CREDENTIALS';
export const secondFactor: Code<'/api/v1/auth/login', 'post', 401> = '2FA_REQUIRED';
export const mustChange: Code<'/api/v1/auth/login', 'post', 403> = 'PASSWORD_CHANGE_REQUIRED';
export const locked: Code<'/api/v1/auth/login', 'post', 429> = 'ACCOUNT_LOCKED';
export const reused: Code<'/api/v1/auth/refresh', 'post', 401> = 'REFRESH_TOKEN_REUSED';
export const undecryptable: Code<'/api/v1/auth/validate', 'post', 400> = 'DECRYPTION_FAILED';
export const expired: Code<'/api/v1/auth/validate', 'post', 401> = 'TOKEN_EXPIRED';

// The check itself: a code the document does not list is refused (else the directive is unused, an error).
// @ts-expect-error NOT_A_CODE is in no enum
export const notACode: Code<'/api/v1/auth/login', 'post', 401> = 'NOT_A_CODE';
// @ts-expect-error a status the route does not answer
export const notAStatus: Code<'/api/v1/auth/login', 'post', 418> = 'INVALID_CREDENTIALS';
`;
