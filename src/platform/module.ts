/**
 * Capability modules (docs/decisions.md "Capability modules"). Each capability folder exports one
 * factory, `<capability>Module(deps)`, whose parameter is a narrow interface naming only what the
 * capability uses, and which returns a `Module`: what it offers other capabilities (`provides`),
 * its routes, its OpenAPI tags and its background jobs. `compose` chains the factories in
 * dependency order; the type checker refuses a module whose dependencies no earlier module (or
 * the platform) provides, so the order in `src/app.ts` is checked, not remembered.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { App } from './http/app.js';
import type { BodyEnvelope } from './http/envelope.js';
import type { Job } from './scheduler.js';

export interface OpenApiTag {
  name: string;
  description: string;
}

export interface Module<Provides extends object = object> {
  /** Kebab-case, unique: names the module in errors and logs. */
  name: string;
  /** What later modules may depend on. Keys are unique across all modules. */
  provides: Provides;
  /** Tags this module's routes use, in the order the OpenAPI document lists them. */
  tags?: readonly OpenApiTag[];
  /**
   * Root-scope set-up before any routes (request decorators that every capability reads, such
   * as the guard's `request.auth`). Routes themselves go in `routes`.
   */
  setup?(app: App): void;
  /** The module's routes, registered as one encapsulated Fastify plugin. */
  routes?: FastifyPluginAsync;
  /** Operator-only routes for the management listener (MANAGEMENT_PORT), never on the public port. */
  managementRoutes?: FastifyPluginAsync;
  /** Wraps request and response bodies (transport encryption); at most one module supplies it. */
  envelope?: BodyEnvelope;
  /** Background jobs the process scheduler runs (src/platform/scheduler.ts). */
  jobs?: readonly Job[];
  /** Loads what the module needs before the first request (caches, keys); in module order. */
  init?(): Promise<void>;
  /** Releases what the module holds (worker threads, connections); in reverse module order. */
  close?(): Promise<void> | void;
}

/** A chain of modules in dependency order; `deps` is everything provided so far. */
export class Composition<Deps extends object> {
  private constructor(
    readonly deps: Deps,
    readonly modules: readonly Module[],
    private readonly owners: ReadonlyMap<string, string>,
  ) {}

  /** Starts a chain from what the platform offers every module. */
  static from<Base extends object>(base: Base): Composition<Base> {
    return new Composition(base, [], new Map(Object.keys(base).map((k) => [k, 'platform'])));
  }

  /**
   * Builds the next module from what is provided so far. A factory's parameter type is its
   * dependency interface: when something it names is missing, this call does not compile.
   */
  use<Provides extends object>(factory: (deps: Deps) => Module<Provides>): Composition<Deps & Provides> {
    const module = factory(this.deps);
    const owners = new Map(this.owners);
    for (const key of Object.keys(module.provides)) {
      const owner = owners.get(key);
      if (owner !== undefined) throw new Error(`Module "${module.name}" provides "${key}", which "${owner}" already provides.`);
      owners.set(key, module.name);
    }
    if (this.modules.some((m) => m.name === module.name)) throw new Error(`Two modules are named "${module.name}".`);
    if (module.envelope && this.modules.some((m) => m.envelope)) throw new Error(`Module "${module.name}" supplies a body envelope; only one module may.`);
    return new Composition({ ...this.deps, ...module.provides }, [...this.modules, module], owners);
  }
}
