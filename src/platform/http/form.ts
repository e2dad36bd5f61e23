/**
 * `application/x-www-form-urlencoded` bodies, for the routes SPEC shows as forms (LDAP sign-in,
 * SAML sign-in and its assertion consumer). A field given twice is refused, not guessed.
 */
import type { FastifyInstance } from 'fastify';
import { CommonErrors } from '../errors.js';

export function parseForm(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    if (Object.hasOwn(out, k)) throw CommonErrors.MALFORMED_REQUEST({ reason: `the form field ${k} is given more than once` });
    out[k] = v;
  }
  return out;
}

/** Registers the form parser in this plugin's scope. */
export function acceptForms(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseForm(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
