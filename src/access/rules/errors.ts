/**
 * The one error the access-rule compilers throw: a rule an operator wrote is unusable. `field`
 * is the path of the offending value inside the rule set (`ip.allow[2]`, `schedule[0].from`,
 * `geofences[1].points[4]`) and the message repeats it, so a log line or an API error body can
 * show `ip.allow[2]: "10.0.0.0/33" is not a CIDR block` as is. Rules are compiled once, when a
 * policy is saved or loaded, so this error never comes out of an evaluation: evaluations fail
 * closed (deny) on bad input instead of throwing.
 */
export class InvalidRuleError extends Error {
  readonly code = 'INVALID_RULE';

  /**
   * @param field  where in the rule set the problem is, e.g. `ip.allow[2]`.
   * @param reason what is wrong with it, without the field, e.g. `"10.0.0.0/33" is not a CIDR block`.
   */
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'InvalidRuleError';
  }
}

/**
 * A value as it may appear in an `InvalidRuleError` message: strings quoted (and cut at 64
 * characters, so a pasted blob does not flood the log), other values by their type or literal.
 */
export function quoteValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'a list' : `a ${typeof value}`;
}
