/**
 * A body envelope wraps request and response bodies for the whole HTTP app (transport
 * encryption is the one Strongroom has). The HTTP shell calls it at fixed points so its work
 * happens in the right order: after the request id and before validation on the way in, before
 * the body is hashed (`X-Content-SHA256`) on the way out.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface BodyEnvelope {
  /** The request property the envelope keeps its per-request state in (declared at the root, `null` first). */
  readonly requestDecorator: string;
  /** Root `onRequest`: refuses requests that must be wrapped and are not. */
  enforce(request: FastifyRequest): Promise<void>;
  /** Root `preValidation`: replaces a wrapped body by its plaintext. */
  decrypt(request: FastifyRequest): Promise<void>;
  /** Called on the serialized answer before it is hashed and sent. */
  seal(request: FastifyRequest, reply: FastifyReply, payload: string | Buffer): string | Buffer;
}
