/**
 * A recovery workflow as the API shows it: its state, what was lost, when it expires, and its
 * proofs (given, how many still needed, the alternatives that suffice, and each proof's
 * attempts left and, once a code went out, its masked destination). Built from the matrix and
 * the workflow's rows only, never from what the account has enrolled: a made-up account's
 * workflow reads the same.
 */
import type { RecoveryState } from '../platform/db/schema.js';
import { liveAlternatives, OPERATOR_PROOFS, proofsOf, stillNeeded, type Alternative, type Proof, type RecoveryKind } from './matrix.js';
import type { ProofRow, WorkflowRow } from './store.js';

/** Attempts per proof per workflow (the security-question count). */
export const PROOF_ATTEMPTS = 3;

export interface ProofOption {
  proof: Proof;
  attempts_left: number;
  /** False for a proof the customer cannot give through these routes yet (a branch's approval). */
  available: boolean;
  /** The masked contact the last code went to (codes only, once one was sent). */
  destination?: string;
}

export interface RecoveryView {
  state: RecoveryState;
  lost: RecoveryKind;
  expires_at: string;
  proofs: {
    given: Proof[];
    /** The fewest proofs still to give (0 once verified, or when the workflow has ended). */
    needed: number;
    alternatives: Proof[][];
    options: ProofOption[];
  };
  completed_at?: string;
  /** `waiting`: when the recovery takes effect, unless cancelled. */
  waiting_until?: string;
  /** What to read to a branch operator: while an alternative holding a branch's approval can still be met. */
  reference?: string;
}

/** The proofs given so far. */
export function passedOf(rows: ReadonlyMap<Proof, ProofRow>): Set<Proof> {
  return new Set([...rows.values()].filter((r) => r.passed_at !== null).map((r) => r.proof));
}

/** The proofs out of attempts and not given. */
export function lockedOf(rows: ReadonlyMap<Proof, ProofRow>): Set<Proof> {
  return new Set([...rows.values()].filter((r) => r.passed_at === null && r.attempts >= PROOF_ATTEMPTS).map((r) => r.proof));
}

export function present(wf: WorkflowRow, alternatives: readonly Alternative[], rows: ReadonlyMap<Proof, ProofRow>): RecoveryView {
  const given = passedOf(rows);
  const proving = wf.state === 'initiated' || wf.state === 'verifying';
  const options = proofsOf(alternatives).map((proof): ProofOption => {
    const r = rows.get(proof);
    const sent = r?.last_sent_at != null && r.destination_masked !== null;
    return { proof, attempts_left: Math.max(0, PROOF_ATTEMPTS - (r?.attempts ?? 0)), available: !OPERATOR_PROOFS.has(proof), ...(sent ? { destination: r.destination_masked! } : {}) };
  });
  const branchOpen = proving && liveAlternatives(alternatives, given, lockedOf(rows)).some((a) => a.includes('branch_approval'));
  return {
    state: wf.state,
    lost: wf.kind,
    expires_at: wf.expires_at.toISOString(),
    proofs: {
      given: proofsOf(alternatives).filter((p) => given.has(p)),
      needed: proving ? stillNeeded(alternatives, given, lockedOf(rows)) : 0,
      alternatives: alternatives.map((a) => [...a]),
      options,
    },
    ...(wf.completed_at ? { completed_at: wf.completed_at.toISOString() } : {}),
    ...(wf.state === 'waiting' && wf.waiting_until ? { waiting_until: wf.waiting_until.toISOString() } : {}),
    ...(branchOpen && wf.reference !== null ? { reference: wf.reference } : {}),
  };
}
