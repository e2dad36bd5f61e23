/**
 * `request.log` without a pino child per request. Fastify makes `logger.child({reqId})` for
 * every request, and with our redaction paths (src/platform/observability/logger.ts: about 50
 * wildcard paths) pino runs its redacting serializer over each child's bindings: about 13% of
 * the CPU of a validate (docs/benchmarks.md). Most requests log nothing, so the child is made on
 * the first log call instead; a level the parent has switched off is answered without making
 * it. A line that is logged goes through the same child, so redaction is unchanged.
 */
import type { Logger } from 'pino';

type LogFn = (...args: unknown[]) => void;

class LazyChildLogger {
  #child: Logger | undefined;

  constructor(private readonly parent: Logger, private readonly childBindings: Record<string, unknown>) {}

  #real(): Logger {
    return (this.#child ??= this.parent.child(this.childBindings));
  }

  #log(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    if (this.#child === undefined && !this.parent.isLevelEnabled(level)) return;
    (this.#real()[level] as LogFn)(...args);
  }

  get level(): string {
    return (this.#child ?? this.parent).level;
  }

  set level(value: string) {
    this.#real().level = value;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }

  bindings(): Record<string, unknown> {
    return this.#real().bindings();
  }

  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): Logger {
    return this.#real().child(bindings, options);
  }

  fatal(...args: unknown[]): void { this.#log('fatal', args); }
  error(...args: unknown[]): void { this.#log('error', args); }
  warn(...args: unknown[]): void { this.#log('warn', args); }
  info(...args: unknown[]): void { this.#log('info', args); }
  debug(...args: unknown[]): void { this.#log('debug', args); }
  trace(...args: unknown[]): void { this.#log('trace', args); }
  silent(): void {}
}

/** Fastify's `childLoggerFactory`: a lazy child, or a real one when the route sets its own level. */
export function lazyChildLogger(logger: Logger, bindings: Record<string, unknown>, options: { level?: string }): Logger {
  if (options.level !== undefined) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings) as unknown as Logger;
}
