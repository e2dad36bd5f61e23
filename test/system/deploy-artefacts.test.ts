/**
 * The deployment artefacts as a bank's platform team takes them: the Dockerfile and
 * .dockerignore, compose.yaml with its HAProxy configuration, the Kubernetes manifests under
 * deploy/kubernetes, and .env.example. No container engine runs here, so the files are read
 * and checked against the code (the configuration the service reads, the routes it serves, the
 * CLI's commands, the compiled layout), and scripts/container-steps.sh runs the image's steps
 * for real against this suite's PostgreSQL.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { parseCommand } from '../../src/cli/args.js';
import { ConfigError, loadConfig, type Config } from '../../src/platform/config.js';
import { RATE_GROUPS, rateLimitVar } from '../../src/platform/config-rate-limits.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import type { App } from '../../src/platform/http/app.js';
import { createTestApp, emptyPostgresDatabase, type TestApp } from '../harness/app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const K8S = path.join(ROOT, 'deploy/kubernetes');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

// ---------------------------------------------------------------------------------------------
// The Dockerfile

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  instructions: Instruction[];
}

/** Instructions by stage; continuation lines joined, comments dropped. */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const line of text.replace(/\\\r?\n/g, ' ').split(/\r?\n/).map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+)\s*(.*)$/.exec(line)!;
    const op = m[1]!.toUpperCase();
    const args = m[2]!;
    if (op === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? String(stages.length), instructions: [] });
    stages.at(-1)?.instructions.push({ op, args });
  }
  return stages;
}

const stages = parseDockerfile(read('Dockerfile'));
const runtime = stages.at(-1)!;
const all = (stage: Stage, op: string): string[] => stage.instructions.filter((i) => i.op === op).map((i) => i.args);
const last = (stage: Stage, op: string): string | undefined => all(stage, op).at(-1);
/** The runtime stage's ENV, as the container's process sees it. */
const imageEnv: Record<string, string> = Object.fromEntries(all(runtime, 'ENV').flatMap((a) => [...a.matchAll(/(\w+)=(\S*)/g)].map((m) => [m[1]!, m[2]!])));
const healthcheckCmd = JSON.parse(/\bCMD\s+(\[.*\])\s*$/.exec(last(runtime, 'HEALTHCHECK') ?? '')?.[1] ?? 'null') as string[] | null;
const entrypoint = JSON.parse(last(runtime, 'ENTRYPOINT') ?? 'null') as string[] | null;
const imageUser = last(runtime, 'USER') ?? '';

// ---------------------------------------------------------------------------------------------
// YAML, compose, Kubernetes

const yamlOptions = { merge: true } as const;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  resources?: { requests?: { cpu?: string; memory?: string }; limits?: { cpu?: string; memory?: string } };
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  containers: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; runAsGroup?: number };
  terminationGracePeriodSeconds?: number;
  restartPolicy?: string;
  volumes?: Array<{ name: string; secret?: { secretName: string; items?: Array<{ key: string; path: string }> }; emptyDir?: object }>;
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    replicas?: number;
    minAvailable?: number;
    selector?: { matchLabels?: Record<string, string> } & Record<string, string>;
    template?: { metadata: { labels: Record<string, string> }; spec: PodSpec };
    ports?: Array<{ name: string; port: number; targetPort: string | number }>;
    podSelector?: { matchLabels: Record<string, string> };
    ingress?: Array<{ ports?: Array<{ port: string | number }> }>;
  };
}

/** Every manifest under deploy/kubernetes, by file (kustomization.yaml included). */
const k8sFiles = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f)).sort();
const k8sDocs = new Map(k8sFiles.map((f) => [f, parseAllDocuments(readFileSync(path.join(K8S, f), 'utf8'), yamlOptions).map((d) => d.toJS() as Manifest)] as const));
const manifests = [...k8sDocs.entries()].filter(([f]) => f !== 'kustomization.yaml').flatMap(([, docs]) => docs);
const one = (kind: string, name?: string): Manifest => {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  if (found.length !== 1) throw new Error(`deploy/kubernetes must hold one ${kind}${name ? ` ${name}` : ''}, not ${found.length}`);
  return found[0]!;
};
const deployment = one('Deployment');
const job = one('Job');
const configMap = one('ConfigMap');
const secretTemplate = one('Secret');
const pdb = one('PodDisruptionBudget');
const service = one('Service');
const podOf = (m: Manifest): PodSpec => m.spec!.template!.spec;
const server = podOf(deployment).containers[0]!;
const migrator = podOf(job).containers[0]!;

interface ComposeService {
  image?: string;
  build?: unknown;
  env_file?: string | string[];
  environment?: Record<string, string>;
  entrypoint?: string[];
  command?: string[];
  user?: string;
  read_only?: boolean;
  cap_drop?: string[];
  secrets?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  stop_signal?: string;
  stop_grace_period?: string;
  volumes?: string[];
  networks?: Record<string, { ipv4_address?: string }> | string[];
}
interface Compose {
  services: Record<string, ComposeService>;
  secrets?: Record<string, { file?: string }>;
}
const compose = parseYaml(read('compose.yaml'), yamlOptions) as Compose;
/** The services that run Strongroom's image (the others are PostgreSQL's and HAProxy's own). */
const strongroomServices = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
const composeNodes = strongroomServices.filter(([name]) => name !== 'migrate');

// ---------------------------------------------------------------------------------------------
// .env.example

interface EnvExample {
  /** Uncommented settings, before the compose-only section. */
  set: Record<string, string>;
  /** Every variable named, commented or not, before the compose-only section. */
  named: string[];
  /** The section read by compose.yaml only. */
  composeOnly: Record<string, string>;
}
function parseEnvExample(text: string): EnvExample {
  const out: EnvExample = { set: {}, named: [], composeOnly: {} };
  let composeOnly = false;
  for (const line of text.split('\n')) {
    if (/^# -+ compose\.yaml only/.test(line)) composeOnly = true;
    const m = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) continue;
    if (composeOnly) {
      if (!m[1]) out.composeOnly[m[2]!] = m[3]!;
      continue;
    }
    out.named.push(m[2]!);
    if (!m[1]) out.set[m[2]!] = m[3]!;
  }
  return out;
}
const envExample = parseEnvExample(read('.env.example'));

// ---------------------------------------------------------------------------------------------
// What the configuration reads

/**
 * Every variable the service reads: the names in the configuration's sources
 * (src/platform/config*.ts: loadConfig and the readers it calls), the rate-limit variables it
 * builds from its groups, and what the rest of src reads from process.env directly (the CLI's
 * STRONGROOM_ADMIN_PASSWORD).
 */
function variablesTheServiceReads(): Set<string> {
  const names = new Set<string>();
  const platform = path.join(ROOT, 'src/platform');
  for (const f of readdirSync(platform).filter((f) => /^config.*\.ts$/.test(f) && !f.endsWith('.test.ts'))) {
    for (const m of readFileSync(path.join(platform, f), 'utf8').matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,})'/g)) names.add(m[1]!);
  }
  for (const g of RATE_GROUPS) for (const d of ['ip', 'account'] as const) names.add(rateLimitVar(g, d));
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
  for (const file of walk(path.join(ROOT, 'src'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g)) names.add(m[1] ?? m[2]!);
  }
  return names;
}
const READ = variablesTheServiceReads();

/** The variables production refuses to start without, as the configuration itself names them. */
function productionRequires(): string[] {
  try {
    loadConfig({ NODE_ENV: 'production' });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.filter((p) => p.startsWith('production requires ')).map((p) => /^production requires ([A-Z_]+)/.exec(p)![1]!);
  }
  throw new Error('production started without any setting');
}

/** Test values for the secrets an artefact leaves to the operator. */
const SECRETS: Record<string, string> = {
  FIELD_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  IP_HASH_KEY: randomBytes(32).toString('base64'),
};
const fillSecrets = (env: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === '' || v === 'REPLACE_ME' ? SECRETS[k] ?? v : v]));

/** loadConfig on `env`, recording every variable it looks at. */
function loadRecording(env: Record<string, string>): { config: Config; read: Set<string> } {
  const seen = new Set<string>();
  const proxy = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') seen.add(key);
      return target[key as string];
    },
  });
  return { config: loadConfig(proxy), read: seen };
}

/** The pod's environment: the image's ENV, the ConfigMap (envFrom), then env (Secret keys present in `secret`). */
function podEnv(c: Container, secret: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { ...imageEnv };
  for (const from of c.envFrom ?? []) {
    expect(from.configMapRef?.name, 'envFrom names only the ConfigMap').toBe(configMap.metadata.name);
    Object.assign(env, configMap.data);
  }
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      expect(ref.name).toBe(secretTemplate.metadata.name);
      if (ref.key in secret) env[e.name] = secret[ref.key]!;
      else expect(ref.optional, `${e.name}: the Secret template has no key ${ref.key}, so it must be optional`).toBe(true);
    } else if (e.value !== undefined) env[e.name] = e.value;
  }
  return env;
}

/** compose's ${NAME}, ${NAME:-default}, ${NAME:?message}. */
function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?::?([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const v = vars[name];
    if (v !== undefined && v !== '') return v;
    if (op === '-') return arg ?? '';
    throw new Error(`compose.yaml needs ${name}: ${arg ?? ''}`);
  });
}

/** A compose node's environment: the image's ENV, .env (env_file), then its environment block. */
function composeEnv(s: ComposeService, dotEnv: Record<string, string>): Record<string, string> {
  expect([s.env_file].flat()).toEqual(['.env']);
  const own = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), { ...dotEnv, ...envExample.composeOnly, POSTGRES_PASSWORD: 'compose-test' })]));
  return { ...imageEnv, ...dotEnv, ...own };
}

const ms = (duration: string): number => {
  const m = /^(\d+)(ms|s|m)$/.exec(duration);
  expect(m, `a duration: ${duration}`).not.toBeNull();
  return Number(m![1]) * { ms: 1, s: 1000, m: 60_000 }[m![2] as 'ms' | 's' | 'm'];
};
const labelsMatch = (selector: Record<string, string>, labels: Record<string, string>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);
const mebibytes = (q: string): number => {
  const m = /^(\d+(?:\.\d+)?)(Mi|Gi)$/.exec(q);
  expect(m, `a quantity in Mi or Gi: ${q}`).not.toBeNull();
  return Number(m![1]) * (m![2] === 'Gi' ? 1024 : 1);
};

// ---------------------------------------------------------------------------------------------

describe('deployment artefacts', () => {
  it('every YAML file parses: compose.yaml and each Kubernetes manifest, one kind and name per document', () => {
    expect(() => parseYaml(read('compose.yaml'), yamlOptions)).not.toThrow();
    for (const [file, docs] of k8sDocs) {
      const parsed = parseAllDocuments(readFileSync(path.join(K8S, file), 'utf8'), yamlOptions);
      expect(parsed.flatMap((d) => d.errors), file).toEqual([]);
      for (const doc of docs) {
        expect(doc.apiVersion, file).toMatch(/^[\w./-]+$/);
        expect(doc.kind, file).toMatch(/^[A-Z]\w+$/);
        if (doc.kind !== 'Kustomization') expect(doc.metadata.name, file).toMatch(/^[a-z0-9-]+$/);
      }
    }
    expect(Object.keys(compose.services).sort()).toEqual(['haproxy', 'migrate', 'postgres', 'strongroom-1', 'strongroom-2']);
  });

  it('names only environment variables the configuration reads (Dockerfile, compose.yaml, the Kubernetes manifests, .env.example)', () => {
    const named: Array<[string, string]> = [
      ...Object.keys(imageEnv).map((n) => ['Dockerfile ENV', n] as [string, string]),
      ...[...(healthcheckCmd ?? []).join(' ').matchAll(/process\.env\.(\w+)/g)].map((m) => ['Dockerfile HEALTHCHECK', m[1]!] as [string, string]),
      ...strongroomServices.flatMap(([name, s]) => [
        ...Object.keys(s.environment ?? {}).map((n) => [`compose.yaml ${name}`, n] as [string, string]),
        ...[...(s.healthcheck?.test ?? []).join(' ').matchAll(/process\.env\.(\w+)/g)].map((m) => [`compose.yaml ${name} healthcheck`, m[1]!] as [string, string]),
      ]),
      ...Object.keys(configMap.data ?? {}).map((n) => ['ConfigMap', n] as [string, string]),
      ...[server, migrator].flatMap((c) => (c.env ?? []).map((e) => [`container ${c.name}`, e.name] as [string, string])),
      ...envExample.named.map((n) => ['.env.example', n] as [string, string]),
    ];
    expect(named.length).toBeGreaterThan(40);
    const unknown = named.filter(([, n]) => !READ.has(n)).map(([where, n]) => `${where}: ${n}`);
    expect(unknown, 'variables the service does not read').toEqual([]);

    // compose.yaml's own variables are in .env.example's compose-only section, and nowhere else.
    const interpolated = new Set([...read('compose.yaml').matchAll(/\$\{(\w+)/g)].map((m) => m[1]!));
    expect([...interpolated].sort()).toEqual(Object.keys(envExample.composeOnly).sort());
    for (const n of interpolated) expect(READ.has(n), `${n} is compose's, not the service's`).toBe(false);
  });

  it('each artefact\'s production settings, with its secrets supplied, are a configuration the service accepts and reads in full', () => {
    const required = productionRequires();
    expect(required).toEqual(expect.arrayContaining(['DATABASE_URL', 'FIELD_ENCRYPTION_KEY', 'IP_HASH_KEY', 'TRANSPORT_PRIVATE_KEY_PATH']));
    const secretData = fillSecrets(secretTemplate.stringData ?? {});
    const dotEnv = fillSecrets(envExample.set);
    const cases: Array<[string, Record<string, string>]> = [
      ['Kubernetes Deployment', podEnv(server, secretData)],
      ['Kubernetes migrate Job', podEnv(migrator, secretData)],
      ['.env.example', dotEnv],
      ...composeNodes.map(([name, s]) => [`compose.yaml ${name}`, composeEnv(s, dotEnv)] as [string, Record<string, string>]),
      ['compose.yaml migrate', composeEnv(compose.services.migrate!, dotEnv)],
    ];
    for (const [what, env] of cases) {
      for (const name of required) expect(env[name], `${what} sets ${name}`).toBeTruthy();
      const { config, read: seen } = loadRecording(env);
      expect(config.env, what).toBe('production');
      expect(config.management.port, `${what}: the management listener`).toBe(Number(imageEnv.MANAGEMENT_PORT));
      expect(config.trustProxy, `${what}: TRUST_PROXY names the proxies`).not.toBe(false);
      // A variable that is set but not read (LDAP_BIND_DN without LDAP_URI, a typo) would be ignored in silence.
      expect(Object.keys(env).filter((n) => !['PATH', 'HOME'].includes(n) && !seen.has(n)), `${what}: set but never read`).toEqual([]);
    }
  });

  it('ships no secret: the Secret template and .env.example hold placeholders that stop production at start, naming each key', () => {
    for (const [key, value] of Object.entries(secretTemplate.stringData ?? {})) expect(value, `Secret template ${key}`).toMatch(/REPLACE_ME/);
    const secretNames = ['FIELD_ENCRYPTION_KEY', 'FIELD_ENCRYPTION_KEYS_PREVIOUS', 'IP_HASH_KEY', 'TRANSPORT_PRIVATE_KEY', 'METRICS_TOKEN', 'SMS_GATEWAY_TOKEN', 'USSD_GATEWAY_KEYS', 'LDAP_BIND_PASSWORD', 'BOOTSTRAP_ADMIN_PASSWORD'];
    const text = read('.env.example');
    for (const name of secretNames) {
      for (const m of text.matchAll(new RegExp(`^#?\\s*${name}=(.*)$`, 'gm'))) expect(m[1], `.env.example ${name}`).toBe('');
    }
    for (const [k, v] of Object.entries(envExample.composeOnly)) expect(v, `.env.example ${k}`).toBe('');
    for (const url of text.matchAll(/\w+:\/\/([^:@\s/]+):([^@\s]+)@/g)) expect(url[2], `a password in ${url[0]}`).toBe('CHANGE_ME');
    for (const m of (secretTemplate.stringData?.DATABASE_URL ?? '').matchAll(/\/\/[^:]+:([^@]+)@/g)) expect(m[1]).toBe('REPLACE_ME');

    const artefacts = ['Dockerfile', 'compose.yaml', '.env.example', 'deploy/compose/haproxy.cfg', ...k8sFiles.map((f) => `deploy/kubernetes/${f}`)];
    for (const file of artefacts) expect(read(file), file).not.toMatch(/-----BEGIN [A-Z ]*PRIVATE KEY-----|\b[A-Za-z0-9+/]{43}=/);
    for (const [name, s] of strongroomServices) for (const key of ['FIELD_ENCRYPTION_KEY', 'IP_HASH_KEY']) expect(s.environment?.[key], `compose.yaml ${name} ${key} comes from .env`).toBeUndefined();

    // Applied unchanged, the template and .env.example stop the service instead of running it on known keys.
    const asGiven = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
      }
      return [];
    };
    const fromTemplate = asGiven(podEnv(server, secretTemplate.stringData ?? {}));
    const fromExample = asGiven(envExample.set);
    for (const key of ['FIELD_ENCRYPTION_KEY', 'IP_HASH_KEY']) {
      expect(fromTemplate.join('\n'), `the Secret template's ${key}`).toContain(key);
      expect(fromExample.join('\n'), `.env.example's ${key}`).toContain(key);
    }
  });

  it('the transport key file the configuration names is where the Secret (Kubernetes) and the compose secret are mounted', () => {
    for (const c of [server, migrator]) {
      const pod = c === server ? podOf(deployment) : podOf(job);
      const keyPath = podEnv(c, fillSecrets(secretTemplate.stringData ?? {})).TRANSPORT_PRIVATE_KEY_PATH!;
      const mounted = (c.volumeMounts ?? []).flatMap((m) => {
        const volume = pod.volumes?.find((v) => v.name === m.name);
        return (volume?.secret?.items ?? []).map((item) => ({ file: path.posix.join(m.mountPath, item.path), key: item.key, secret: volume!.secret!.secretName, readOnly: m.readOnly }));
      });
      const mount = mounted.find((x) => x.file === keyPath);
      expect(mount, `${c.name}: ${keyPath} is mounted`).toBeDefined();
      expect(mount!.secret).toBe(secretTemplate.metadata.name);
      expect(Object.keys(secretTemplate.stringData ?? {})).toContain(mount!.key);
      expect(mount!.readOnly).toBe(true);
    }
    for (const [name, s] of strongroomServices) {
      const keyPath = s.environment?.TRANSPORT_PRIVATE_KEY_PATH;
      expect(keyPath, name).toMatch(/^\/run\/secrets\/\w+$/);
      const secret = path.posix.basename(keyPath!);
      expect(s.secrets, name).toContain(secret);
      expect(compose.secrets?.[secret]?.file, `the compose secret ${secret}`).toBeTruthy();
    }
  });

  it('the image and the pods run as a numeric non-root user, with a read-only root file system, no capabilities and no privilege escalation', () => {
    expect(imageUser).toMatch(/^\d+:\d+$/);
    const [uid, gid] = imageUser.split(':').map(Number) as [number, number];
    expect(uid).not.toBe(0);
    expect(gid).not.toBe(0);
    expect(imageEnv.NODE_ENV).toBe('production');
    expect(entrypoint?.[0], 'node itself is PID 1, so SIGTERM reaches the server').toBe('node');
    expect(last(runtime, 'STOPSIGNAL')).toBe('SIGTERM');
    expect(all(runtime, 'EXPOSE').join(' ').split(/\s+/).map(Number)).toEqual(expect.arrayContaining([Number(imageEnv.PORT), Number(imageEnv.MANAGEMENT_PORT)]));
    expect(stages[0]!.instructions[0]!.args, 'the base image').toMatch(/^\$\{NODE_IMAGE\}|^node:24-slim\b/);
    expect(read('Dockerfile')).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    expect(read('Dockerfile'), 'a comment on pinning the base by digest').toMatch(/digest/);
    expect(all(runtime, 'RUN').join('\n'), 'the runtime stage installs nothing').not.toMatch(/npm (ci|install)/);
    expect(all(stages.find((s) => s.name === 'deps')!, 'RUN').join('\n')).toContain('npm ci --omit=dev --ignore-scripts');

    for (const m of [deployment, job]) {
      const pod = podOf(m);
      expect(pod.securityContext?.runAsNonRoot, m.kind).toBe(true);
      expect(pod.securityContext?.runAsUser, `${m.kind}: the image's user`).toBe(uid);
      expect(pod.securityContext?.runAsGroup, m.kind).toBe(gid);
      for (const c of pod.containers) {
        expect(c.image, `${m.kind} ${c.name}: the image kustomization.yaml sets`).toBe('strongroom');
        expect(c.securityContext, `${m.kind} ${c.name}`).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      }
    }
    for (const [name, s] of strongroomServices) {
      expect(s.user, name).toBe(imageUser);
      expect(s.read_only, name).toBe(true);
      expect(s.cap_drop, name).toEqual(['ALL']);
      expect(s.volumes ?? [], `${name}: nothing writable but /tmp`).toEqual([]);
    }
  });

  describe('probes and health checks name routes that answer', () => {
    let t: TestApp;
    let management: App;
    let config: Config;

    beforeAll(async () => {
      config = loadConfig(podEnv(server, fillSecrets(secretTemplate.stringData ?? {})));
      t = await createTestApp({ configure: () => config });
      management = await t.buildManagementApp();
      await management.ready();
    });
    afterAll(async () => {
      await management?.close();
      await t?.close();
    });

    /** GET `url` on the listener the port stands for: the API's (PORT) or the management listener (MANAGEMENT_PORT). */
    async function get(port: number, url: string): Promise<number> {
      if (port === config.port) return (await t.app.inject({ method: 'GET', url })).statusCode;
      if (port === config.management.port) return (await management.inject({ method: 'GET', url })).statusCode;
      throw new Error(`port ${port} is neither PORT (${config.port}) nor MANAGEMENT_PORT (${config.management.port})`);
    }

    it('the Deployment\'s startup, readiness and liveness probes answer 200 on the ports they name', async () => {
      const ports = new Map((server.ports ?? []).map((p) => [p.name, p.containerPort]));
      const probes = { startupProbe: server.startupProbe, readinessProbe: server.readinessProbe, livenessProbe: server.livenessProbe };
      for (const [kind, probe] of Object.entries(probes)) {
        expect(probe?.httpGet, kind).toBeDefined();
        const port = typeof probe!.httpGet!.port === 'number' ? probe!.httpGet!.port : ports.get(probe!.httpGet!.port);
        expect(await get(port!, probe!.httpGet!.path), `${kind} GET ${probe!.httpGet!.path} on ${probe!.httpGet!.port}`).toBe(200);
      }
      expect(ports.get('http')).toBe(config.port);
      expect(ports.get('management')).toBe(config.management.port);
      // The Service and the NetworkPolicy name ports the container has.
      for (const p of service.spec!.ports!) expect([...ports.keys()], `Service port ${p.name}`).toContain(p.targetPort);
      const policy = one('NetworkPolicy');
      for (const rule of policy.spec!.ingress!) for (const p of rule.ports ?? []) expect([...ports.keys()], 'NetworkPolicy port').toContain(p.port);
      expect(labelsMatch(policy.spec!.podSelector!.matchLabels, deployment.spec!.template!.metadata.labels)).toBe(true);
    });

    it('/metrics is on the management listener only (404 on the API port), where Prometheus reaches it through the Service', async () => {
      expect(await get(config.port, '/metrics')).toBe(404);
      expect(await get(config.management.port!, '/metrics')).toBe(200);
      expect(service.spec!.ports!.map((p) => p.targetPort)).toContain('management');
    });

    it('HAProxy checks GET /health on each node\'s management port, and sends traffic to the API port', async () => {
      const cfg = read('deploy/compose/haproxy.cfg');
      const uri = /http-check send meth GET uri (\S+)/.exec(cfg)?.[1];
      const checkPort = Number(/\bcheck port (\d+)/.exec(cfg)?.[1]);
      expect(uri).toBeDefined();
      expect(await get(checkPort, uri!)).toBe(200);
      const servers = [...cfg.matchAll(/^\s*server \S+ ([\w-]+):(\d+)/gm)];
      expect(servers.map((s) => s[1]).sort()).toEqual(composeNodes.map(([n]) => n).sort());
      for (const s of servers) expect(Number(s[2])).toBe(config.port);
      expect(cfg).toMatch(/^\s*option forwardfor\b/m);
    });

    it('the HEALTHCHECK (and compose\'s copy of it) passes against a healthy node and fails when nothing answers', async () => {
      expect(healthcheckCmd?.slice(0, 2)).toEqual(['node', '-e']);
      for (const [name, s] of composeNodes) expect(s.healthcheck?.test, `compose.yaml ${name}`).toEqual(['CMD', ...healthcheckCmd!]);
      const script = healthcheckCmd![2]!;
      const at = await management.listen({ host: '127.0.0.1', port: 0 });
      const port = new URL(at).port;
      // Asynchronously: the listener answering it is in this process.
      const run = (env: Record<string, string>): Promise<number | null> => new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', script], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore', timeout: 10_000 });
        child.on('error', reject);
        child.on('exit', (code) => resolve(code));
      });
      expect(await run({ MANAGEMENT_PORT: port }), 'the image: MANAGEMENT_PORT set').toBe(0);
      expect(await run({ PORT: port }), 'MANAGEMENT_PORT unset: /health on PORT').toBe(0);
      await management.close();
      expect(await run({ MANAGEMENT_PORT: port }), 'nothing listens').toBe(1);
      management = await t.buildManagementApp();
    });
  });

  it('the PodDisruptionBudget and the Service select the Deployment\'s pods, and not the migration Job\'s', () => {
    const podLabels = deployment.spec!.template!.metadata.labels;
    const jobLabels = job.spec!.template!.metadata.labels;
    const dSelector = deployment.spec!.selector!.matchLabels!;
    expect(labelsMatch(dSelector, podLabels)).toBe(true);
    for (const [what, selector] of [['PodDisruptionBudget', pdb.spec!.selector!.matchLabels!], ['Service', service.spec!.selector as Record<string, string>]] as const) {
      expect(Object.keys(selector).length, what).toBeGreaterThan(0);
      expect(labelsMatch(selector, podLabels), `${what} selects the Deployment's pods`).toBe(true);
      expect(labelsMatch(selector, jobLabels), `${what} leaves the migration pod alone`).toBe(false);
    }
    expect(deployment.spec!.replicas).toBeGreaterThanOrEqual(2);
    expect(pdb.spec!.minAvailable).toBeGreaterThanOrEqual(1);
    expect(pdb.spec!.minAvailable!, 'a drain can still evict one pod').toBeLessThan(deployment.spec!.replicas!);
  });

  it('the migration Job and compose\'s migrate service run the CLI\'s migrate command, from the compiled CLI, with the nodes\' configuration', () => {
    // Where tsc -p tsconfig.build.json puts src/cli.ts and src/server.ts.
    const build = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { rootDir: string } };
    const base = JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string } };
    const compiled = (source: string): string => path.posix.join(base.compilerOptions.outDir, path.posix.relative(build.compilerOptions.rootDir, source)).replace(/\.ts$/, '.js');
    expect(entrypoint).toEqual(['node', compiled('src/server.ts')]);
    const cli = ['node', compiled('src/cli.ts')];

    const jobArgv = [...(migrator.command ?? []), ...(migrator.args ?? [])];
    expect(jobArgv.slice(0, 2)).toEqual(cli);
    expect(parseCommand(jobArgv.slice(2))).toEqual({ name: 'migrate' });
    expect(podOf(job).restartPolicy).toBe('Never');
    // The same configuration and secrets as the server: the command opens the keyrings with FIELD_ENCRYPTION_KEY.
    expect(migrator.image).toBe(server.image);
    expect(migrator.envFrom).toEqual(server.envFrom);
    expect(migrator.env).toEqual(server.env);
    expect(migrator.volumeMounts).toEqual(server.volumeMounts);
    expect(podOf(job).volumes).toEqual(podOf(deployment).volumes);

    const migrate = compose.services.migrate!;
    const composeArgv = [...(migrate.entrypoint ?? []), ...(migrate.command ?? [])];
    expect(composeArgv.slice(0, 2)).toEqual(cli);
    expect(parseCommand(composeArgv.slice(2))).toEqual({ name: 'migrate' });
    expect(migrate.depends_on?.postgres?.condition).toBe('service_healthy');
    for (const [name, s] of composeNodes) {
      expect(s.environment, name).toEqual(migrate.environment);
      expect(s.depends_on, name).toMatchObject({ postgres: { condition: 'service_healthy' }, migrate: { condition: 'service_completed_successfully' } });
    }
    expect(compose.services.haproxy!.depends_on).toEqual(Object.fromEntries(composeNodes.map(([n]) => [n, { condition: 'service_healthy' }])));
    expect(compose.services.postgres!.healthcheck?.test).toContain('pg_isready');
  });

  it('TRUST_PROXY in compose.yaml is HAProxy\'s fixed address, and the nodes publish no port of their own', () => {
    const networks = compose.services.haproxy!.networks as Record<string, { ipv4_address?: string }>;
    const address = Object.values(networks)[0]?.ipv4_address;
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    for (const [name, s] of strongroomServices) {
      expect(s.environment?.TRUST_PROXY, name).toBe(address);
      expect((s as { ports?: unknown }).ports, `${name} publishes no port`).toBeUndefined();
    }
  });

  it('the orchestrators wait longer than the drain: terminationGracePeriodSeconds covers preStop + SHUTDOWN_GRACE_MS, compose\'s stop_grace_period exceeds it', () => {
    const drainMs = Number(configMap.data?.SHUTDOWN_GRACE_MS ?? 10_000);
    const preStop = server.lifecycle?.preStop?.exec?.command ?? [];
    const preStopMs = preStop[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
    const graceMs = (podOf(deployment).terminationGracePeriodSeconds ?? 30) * 1000;
    expect(graceMs).toBeGreaterThanOrEqual(preStopMs + drainMs + 1000);
    expect(graceMs, 'and not so long that a stuck pod lingers').toBeLessThanOrEqual(preStopMs + drainMs + 15_000);
    for (const [name, s] of composeNodes) {
      const composeDrain = Number(s.environment?.SHUTDOWN_GRACE_MS ?? envExample.set.SHUTDOWN_GRACE_MS ?? 10_000);
      expect(s.stop_signal, name).toBe('SIGTERM');
      expect(ms(s.stop_grace_period ?? '10s'), name).toBeGreaterThan(composeDrain);
    }
  });

  it('the pods\' memory request covers the idle RSS measured by the bench (docs/benchmarks.md), with room above it', () => {
    const bench = read('docs/benchmarks.md');
    const idle = bench.split('\n').filter((l) => /idle RSS/i.test(l) && /\(PostgreSQL\)/.test(l)).flatMap((l) => [...l.matchAll(/(\d+(?:\.\d+)?)\s*(?:\/\s*(\d+(?:\.\d+)?)\s*)?MiB/g)].flatMap((m) => [m[1], m[2]].filter(Boolean).map(Number)));
    expect(idle.length, 'idle RSS rows on PostgreSQL in docs/benchmarks.md').toBeGreaterThan(0);
    const { requests, limits } = server.resources ?? {};
    expect(mebibytes(requests!.memory!)).toBeGreaterThanOrEqual(Math.max(...idle));
    expect(mebibytes(limits!.memory!)).toBeGreaterThan(mebibytes(requests!.memory!));
    expect(requests!.cpu).toBeDefined();
    expect(read('deploy/kubernetes/deployment.yaml'), 'the figures say where they come from').toContain('docs/benchmarks.md');
  });

  it('kustomization.yaml lists every manifest but the Secret template, names no namespace, and builds', () => {
    const kustomization = k8sDocs.get('kustomization.yaml')![0] as unknown as { resources: string[]; namespace?: string; images: Array<{ name: string; newName: string }> };
    expect([...kustomization.resources].sort()).toEqual(k8sFiles.filter((f) => f !== 'kustomization.yaml' && f !== 'secret.template.yaml'));
    expect(kustomization.namespace).toBeUndefined();
    for (const m of manifests) expect(m.metadata.namespace, `${m.kind} ${m.metadata.name}`).toBeUndefined();
    expect(kustomization.images.map((i) => i.name)).toEqual(['strongroom']);

    const kubectl = spawnSync('kubectl', ['kustomize', K8S], { encoding: 'utf8', timeout: 30_000 });
    if (kubectl.error) {
      console.log(`[deploy-artefacts] kubectl not found: kustomize build not checked (${kubectl.error.message})`);
      return;
    }
    expect(kubectl.status, kubectl.stderr).toBe(0);
    const built = parseAllDocuments(kubectl.stdout).map((d) => d.toJS() as Manifest);
    expect(built.map((m) => m.kind).sort()).toEqual(manifests.filter((m) => m.kind !== 'Secret').map((m) => m.kind).sort());
    for (const m of built.filter((x) => x.spec?.template)) expect(podOf(m).containers[0]!.image).toBe(`${kustomization.images[0]!.newName}:0.1.0`);
  });

  it('.dockerignore admits what the Dockerfile copies from the repository and nothing else (no .env, data/, node_modules)', () => {
    const ignore = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
    expect(ignore[0], 'an allow-list: everything excluded first').toBe('*');
    const admitted = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = stages.flatMap((s) => all(s, 'COPY')).filter((a) => !a.includes('--from=')).flatMap((a) => a.split(/\s+/).filter((x) => !x.startsWith('--')).slice(0, -1));
    expect([...new Set(copied)].sort()).toEqual([...admitted].sort());
    for (const file of copied) expect(existsSync(path.join(ROOT, file)), file).toBe(true);
    for (const never of ['.env', 'data', 'node_modules', 'dist', '.git']) expect(admitted).not.toContain(never);
  });

  /** How this machine's npm reaches its registry (CA file, proxy, where its global configuration is): the image build has its own. */
  const npmSettings = (): Record<string, string> =>
    Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && /^(npm_config_(globalconfig|cafile|registry|proxy|https_proxy|noproxy|strict_ssl)|NODE_EXTRA_CA_CERTS|HTTPS?_PROXY|NO_PROXY)$/i.test(e[0])));

  it('scripts/container-steps.sh builds, installs production dependencies, migrates a fresh PostgreSQL database, starts the server as a non-root user, passes the HEALTHCHECK, serves the console and exits 0 on SIGTERM', { timeout: 240_000 }, async () => {
    const databaseUrl = await emptyPostgresDatabase('deploy');
    const started = Date.now();
    const result = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn('bash', [path.join(ROOT, 'scripts/container-steps.sh')], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}), ...npmSettings(), DATABASE_URL: databaseUrl },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => child.kill('SIGTERM'), 220_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });
    console.log(`[deploy-artefacts] scripts/container-steps.sh took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(result.code, result.out).toBe(0);
    expect(result.out).toContain('npm ci --omit=dev --ignore-scripts');
    expect(result.out).toContain(`applied ${Object.keys(migrations).length} migrations`);
    expect(result.out).toMatch(/create-admin \| Created administrator "ops\.admin"/);
    expect(result.out).toMatch(/health: HEALTHCHECK passed/);
    const uid = /server process \d+ runs as uid (\d+)/.exec(result.out)?.[1];
    expect(Number(uid), 'the server ran as a non-root user').toBeGreaterThan(0);
    if (process.getuid?.() === 0) expect(`${uid}:${uid}`).toBe(imageUser);
    expect(result.out).toContain('metrics: 404 on the API port, 200 on the management port');
    expect(result.out, 'the image ships the console (dist/console)').toContain('console: /console 200, /account/sessions 200, its script 200');
    expect(result.out).toMatch(/exit: 0 after SIGTERM in \d+ ms/);
    expect(result.out).toMatch(/container-steps: OK/);
  });
});
