/** Security questions (issue 4 section 4). */
import type { MfaDeps } from '../deps.js';

export class SecurityQuestionService {
  constructor(private readonly deps: MfaDeps) {}
}
