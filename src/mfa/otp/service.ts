/** One-time codes by email and SMS (issue 4 section 3). */
import type { MfaDeps } from '../deps.js';

export class OtpService {
  constructor(private readonly deps: MfaDeps) {}
}
