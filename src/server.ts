/** `npm start`: the HTTP API and its background workers in one process. */
import { bootstrapAdmin, seedFaqOnFirstStart } from './bootstrap.js';
import { describeSmtp, smtpMayBeClear } from './mail/mailer.js';
import pino, { type Logger } from 'pino';
import { ConfigError, loadConfig, PRODUCTION_MFA_ROLES, type Config, type TrustProxy } from './platform/config.js';
import type { TracingConfig } from './platform/config-tracing.js';
import { DatabaseLockedError } from './platform/db/database.js';
import type { App } from './platform/http/app.js';
import { metricsExposure } from './platform/http/ops-routes.js';
import { collectWhenQuiet } from './platform/memory.js';
import { createLogger } from './platform/observability/logger.js';
import { openRuntime } from './runtime.js';

function describeTrust(trust: TrustProxy): string {
  if (trust === false) return 'the connecting peer (TRUST_PROXY=0; X-Forwarded-For is ignored)';
  if (typeof trust === 'number') return `X-Forwarded-For after ${trust} proxy hop${trust === 1 ? '' : 's'} (TRUST_PROXY=${trust}; safe only if the port is reachable through the proxies alone)`;
  return `X-Forwarded-For as written by the proxies at ${trust.join(', ')} (TRUST_PROXY)`;
}

/** Where spans go, without the endpoint's query or credentials and never the headers (they may hold a collector's key). */
function describeTraces(tracing: TracingConfig): { fields: Record<string, unknown>; text: string } {
  if (tracing.exporter === undefined) return { fields: { traces: 'off' }, text: 'Traces: off (OTEL_EXPORTER_OTLP_ENDPOINT names the collector to send them to)' };
  const u = new URL(tracing.exporter.url);
  const endpoint = `${u.origin}${u.pathname}`;
  const sampler = tracing.sampler.endsWith('traceidratio') ? `${tracing.sampler} ${tracing.samplerRatio}` : tracing.sampler;
  const parent = tracing.acceptTraceparent ? 'an incoming traceparent continues the caller\'s trace' : 'incoming traceparent ignored (OTEL_PROPAGATORS=none)';
  return { fields: { traces: { endpoint, service: tracing.serviceName, sampler } }, text: `Traces: OTLP/HTTP to ${endpoint} as service ${tracing.serviceName}, sampler ${sampler}; ${parent}` };
}

/** Fields of a request's line worth reading on a terminal, in this order (req_id is the error body's details.request_id; trace_id is there when tracing is on). */
const LINE_FIELDS = ['error_code', 'status', 'method', 'route', 'ip', 'user_id', 'req_id', 'trace_id'] as const;

/** A log line for a person: the message (an access line as `GET /route 200 1.2 ms`), a request's essentials, and an error's stack below it. */
function readableLine(line: Record<string, unknown>, messageKey: string): string {
  const access = line[messageKey] === 'request' && line.route !== undefined;
  const message = access ? `${String(line.method)} ${String(line.route)} ${String(line.status)} ${String(line.ms)} ms` : String(line[messageKey] ?? '');
  const fields = LINE_FIELDS.filter((k) => line[k] !== undefined && line[k] !== null && !(access && ['status', 'method', 'route'].includes(k))).map((k) => `${k}=${String(line[k])}`);
  const cause = line.cause as { message?: unknown } | undefined;
  if (cause?.message !== undefined) fields.push(`cause=${JSON.stringify(cause.message)}`);
  const stack = (line.err as { stack?: unknown } | undefined)?.stack;
  return `${message}${fields.length > 0 ? `  (${fields.join(' ')})` : ''}${typeof stack === 'string' ? `\n${stack}` : ''}`;
}

/**
 * The process's logger: coloured lines for a person at a terminal outside production (LOG_FORMAT
 * `auto`), JSON for a collector. pino-pretty is a development dependency: where it is not
 * installed (a production image) the lines stay JSON, and the log says so.
 */
async function processLogger(config: Config): Promise<{ log: Logger; note?: string }> {
  const pretty = config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true && config.env !== 'production');
  // Lines are written in blocks of 4 KiB, or every 250 ms, rather than one system call each (an
  // access line per request would otherwise halve the request rate, docs/benchmarks.md);
  // flushed before exit.
  if (!pretty) return { log: createLogger(config.logLevel, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 })) };
  try {
    const { default: pinoPretty } = await import('pino-pretty');
    return { log: createLogger(config.logLevel, pinoPretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss', hideObject: true, messageFormat: readableLine })) };
  } catch {
    return { log: createLogger(config.logLevel), note: 'LOG_FORMAT: pino-pretty is not installed here (a production install?): logging JSON' };
  }
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Strongroom cannot start.\n${err.message}\nSee README.md, "Configuration".`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const { log, note } = await processLogger(config);
  processLog = log;
  if (note) log.warn(note);
  const { strongroom, generated, fromDataDir, migrated } = await openRuntime(config, log, { defaultMetrics: true }).catch((err: unknown) => {
    if (err instanceof DatabaseLockedError) {
      console.error(`Strongroom cannot start: ${err.message}`);
      process.exit(75); // EX_TEMPFAIL
    }
    throw err;
  });

  const registry = strongroom.registry;
  log.info({ database: registry.database.location, migrations_applied: migrated }, `Database: ${registry.database.location}`);
  if (config.mail.url !== undefined) {
    const email = describeSmtp(config.mail.url, config.mail.requireTls);
    if (smtpMayBeClear(config.mail.url, config.mail.requireTls)) {
      log.warn({ email, from: config.mail.from, smtp_require_tls: false }, `Email: ${email}, from ${config.mail.from}. TLS NOT required: one-time codes and temporary passwords may travel in clear (set SMTP_REQUIRE_TLS=1 or use smtps://).`);
    } else log.info({ email, from: config.mail.from }, `Email: ${email}, from ${config.mail.from}`);
  } else log.info({ email: 'not configured' }, 'Email: not configured; temporary passwords are returned in API responses and no password expiry warnings are sent');
  if (config.sms.url !== undefined) log.info({ sms: new URL(config.sms.url).origin }, `SMS: gateway at ${new URL(config.sms.url).origin}`);
  else log.info({ sms: 'not configured' }, 'SMS: not configured');
  const outboxFor = [config.mail.url === undefined ? 'email' : null, config.sms.url === undefined ? 'SMS' : null].filter((x) => x !== null);
  if (config.mfa.devOutbox && outboxFor.length > 0) {
    log.warn({ dev_outbox: outboxFor }, `DEVELOPMENT OUTBOX: one-time codes for ${outboxFor.join(' and ')} are printed in this log instead of being sent. Never in production.`);
  }
  if (config.mfa.requiredRoles.length > 0) log.info({ mfa_required_roles: config.mfa.requiredRoles }, `MFA required for roles: ${config.mfa.requiredRoles.join(', ')} (and wherever an access policy says require_second_factor)`);
  else if (config.env === 'production') log.warn({ mfa_required_roles: [] }, 'MFA required for no role (MFA_REQUIRED_ROLES is set empty): staff and administrators sign in with a password alone unless an access policy says require_second_factor');
  else log.warn({ mfa_required_roles: [] }, `MFA required for no role in development, to keep the first run short; production requires it by default for ${PRODUCTION_MFA_ROLES.split(',').join(', ')} (MFA_REQUIRED_ROLES)`);
  if (config.env !== 'production') {
    log.warn({ env: config.env }, `Development mode (NODE_ENV=${config.env}): not for production.`);
    if (generated.length > 0) log.warn({ generated }, `Generated development secrets in ${config.dataDir}/secrets: ${generated.join(', ')}. Production requires them explicitly.`);
    if (fromDataDir.length > 0) log.warn({ from_data_dir: fromDataDir }, `Using development secrets from ${config.dataDir}/secrets: ${fromDataDir.join(', ')}. Production requires them explicitly.`);
    if (!config.transport.enforce) log.warn({ enforce_transport_encryption: false }, 'Transport encryption is not enforced (ENFORCE_TRANSPORT_ENCRYPTION=0, the development default): clients may send plaintext bodies. Production enforces it.');
    if (config.passwords.bcryptCost < 12) log.warn(`BCRYPT_COST=${config.passwords.bcryptCost} is below 12: for tests only.`);
  }
  log.info({ trust_proxy: config.trustProxy }, `Client addresses: ${describeTrust(config.trustProxy)}`);
  const traces = describeTraces(config.tracing);
  log.info(traces.fields, traces.text);
  if (config.push.projectId !== undefined) log.info({ push: { project: config.push.projectId, api: new URL(config.push.apiUrl).origin } }, `Push: Firebase Cloud Messaging project ${config.push.projectId} at ${new URL(config.push.apiUrl).origin} (PUSH_PROJECT_ID, PUSH_CREDENTIALS_PATH)`);
  else if (config.push.devOutbox) log.warn({ push: 'development outbox' }, 'DEVELOPMENT OUTBOX: push messages are printed in this log instead of being sent (PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH unset; PUSH_DEV_OUTBOX=0 turns it off). Never in production.');
  else log.info({ push: 'not configured' }, 'Push: not configured (PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH unset): device tokens are registered, sending answers 503 PUSH_NOT_CONFIGURED');
  const gateways = config.ussd.gateways.map((g) => g.name); // names only: the keys are never logged
  if (gateways.length > 0) log.info({ ussd_gateways: gateways }, `USSD: gateways ${gateways.join(', ')} (USSD_GATEWAY_KEYS)`);
  else log.info({ ussd_gateways: [] }, 'USSD: no gateway configured (USSD_GATEWAY_KEYS unset): /api/v1/auth/login/ussd and /api/v1/auth/password/ussd answer 503 USSD_NOT_CONFIGURED to every call');
  await bootstrapAdmin(registry);
  await seedFaqOnFirstStart(registry);

  const app = await strongroom.buildApp();
  strongroom.scheduler.start();
  const address = await app.listen({ host: config.host, port: config.port });
  const startupGarbage = collectWhenQuiet(log); // start-up's garbage, once, the first time the node is quiet
  const exposure = metricsExposure(config);
  let management: App | undefined;
  let metricsAt = 'not served';
  if (exposure.on === 'management') {
    management = await strongroom.buildManagementApp();
    const at = await management.listen({ host: exposure.host, port: exposure.port });
    metricsAt = `${at}/metrics`;
    log.info({ management: at }, `Management listener on ${at} (MANAGEMENT_PORT): /metrics and /health; /metrics is not served on the public port`);
  } else if (exposure.on === 'public') {
    metricsAt = `${address}/metrics`;
    if (exposure.token === undefined) log.info({ metrics: 'open' }, `Metrics: ${metricsAt} is open to anyone who reaches the port because NODE_ENV=${config.env}; production needs MANAGEMENT_PORT or METRICS_TOKEN`);
  } else {
    log.warn({ metrics: 'not served' }, 'Metrics: not served. In production /metrics needs MANAGEMENT_PORT (a separate listener, loopback by default) or METRICS_TOKEN (a bearer token on the public port)');
  }
  if (exposure.on !== 'nowhere' && exposure.token !== undefined) metricsAt += ' (METRICS_TOKEN required)';
  log.info({ address, metrics: metricsAt }, `Strongroom listening on ${address}  ·  console ${address}/console  ·  your account ${address}/account  ·  API docs ${address}/api/docs  ·  health ${address}/health  ·  metrics ${metricsAt}`);
  // The service speaks HTTP; its answers tell browsers to use HTTPS only (HSTS).
  const plainHttp = 'Plain HTTP: terminate TLS in front of this port (a load balancer or proxy). Every answer carries Strict-Transport-Security, so browsers will insist on HTTPS for this host name.';
  if (config.env === 'production') log.info({ tls: 'in front' }, plainHttp);
  else log.warn({ tls: 'in front' }, plainHttp);

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'Shutting down: draining in-flight requests');
    const force = setTimeout(() => {
      log.error('Shutdown took too long; exiting');
      log.flush();
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    startupGarbage.stop();
    // No new background runs while requests drain; those under way finish before the database closes.
    await Promise.all([strongroom.scheduler.stop(), app.close(), management?.close()]); // stops accepting, waits for in-flight requests
    await strongroom.close(); // the password-strength worker, the SMTP pool, the last spans
    await registry.database.close(); // PGlite checkpoints and releases its lock
    log.info('Stopped cleanly');
    log.flush(() => process.exit(0));
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** The logger once made, so that a failure after it still writes the lines it holds. */
let processLog: Logger | undefined;

main().catch((err: unknown) => {
  console.error('Strongroom failed to start:', err);
  if (processLog) processLog.flush(() => process.exit(1));
  else process.exit(1);
});
