/** MFA reset with administrator approval (issue 4 section 5). */
import type { MfaDeps } from '../deps.js';

export class MfaResetService {
  constructor(private readonly deps: MfaDeps) {}
}
