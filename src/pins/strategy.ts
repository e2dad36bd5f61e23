/**
 * USSD sign-in: a phone number (E.164) and a PIN, on behalf of a subscriber, through the one
 * sign-in pipeline (src/signin/pipeline.ts) like every other method. The subscriber is found by
 * the phone's blind index; the PIN has its own attempt counter (src/pins/service.ts). An unknown
 * phone number, an account without a PIN and a wrong PIN all cost one bcrypt comparison and
 * answer alike.
 */
import { maskPhone } from '../mfa/otp/templates.js';
import type { Authenticated, SignInStrategy, Subject } from '../signin/strategy.js';
import type { UserStore } from '../users/store.js';
import type { PinService } from './service.js';

/** A wrong PIN, an unknown phone number and a phone without a PIN all answer this. */
export const WRONG_PIN = 'The phone number or PIN is incorrect.';

export interface PinInput {
  phone: string;
  pin: string;
}

export class PinStrategy implements SignInStrategy<PinInput> {
  readonly name = 'pin' as const;
  readonly invalidMessage = WRONG_PIN;

  constructor(private readonly deps: { users: UserStore; pins: PinService }) {}

  async subject(input: PinInput): Promise<Subject> {
    const user = await this.deps.users.findByPhone(input.phone);
    // The audit trail names the account, or the phone number masked (it is personal data).
    return { key: this.deps.pins.attemptKey(user?.id, input.phone), identifier: user?.username ?? maskPhone(input.phone), user };
  }

  /** No password state: a PIN sign-in does not answer for the password's expiry. */
  async authenticate(input: PinInput, subject: Subject): Promise<Authenticated | null> {
    const ok = await this.deps.pins.verify(subject.user, input.pin, subject.key);
    return ok && subject.user ? { user: subject.user } : null;
  }
}
