/** TOTP enrolment and verification, with backup codes (issue 4 section 2). */
import type { MfaDeps } from '../deps.js';

export class TotpService {
  constructor(private readonly deps: MfaDeps) {}
}
