/**
 * A CIDR list as an administrator types it (the console's policy editor): one entry a line or
 * separated by commas, each judged as typed by the server's own parser (rules/ip.ts
 * `compileCidrs`), so the page accepts exactly what a save accepts. Each problem is a reason
 * code the page says in the reader's language. Pure: no Node, no DOM.
 */
import { compileCidrs } from './rules/ip.js';

export type CidrProblem = 'zone' | 'address' | 'prefix' | 'mapped_prefix' | 'duplicate';

export interface CidrEntry {
  /** The entry as typed, trimmed. */
  text: string;
  /** null: a block the server accepts. */
  problem: CidrProblem | null;
}

/** Why one entry is not a CIDR block the server accepts, or null. */
export function cidrProblem(entry: string): Exclude<CidrProblem, 'duplicate'> | null {
  if (accepts(entry)) return null;
  if (entry.includes('%')) return 'zone';
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  if (!accepts(address)) return 'address';
  return address.includes(':') && address.includes('.') && /^\d{1,3}$/.test(entry.slice(slash + 1)) && Number(entry.slice(slash + 1)) < 96 ? 'mapped_prefix' : 'prefix';
}

function accepts(entry: string): boolean {
  try {
    compileCidrs([entry]);
    return true;
  } catch {
    return false;
  }
}

/** The entries of `text` (lines or commas; blanks skipped), each with its problem; a repeated entry is `duplicate`. */
export function parseCidrList(text: string): CidrEntry[] {
  const seen = new Set<string>();
  return text.split(/[\n,]/).map((e) => e.trim()).filter((e) => e !== '').map((entry) => {
    const problem = cidrProblem(entry);
    if (problem) return { text: entry, problem };
    const key = compileCidrs([entry]).blocks[0]!;
    if (seen.has(key)) return { text: entry, problem: 'duplicate' as const };
    seen.add(key);
    return { text: entry, problem: null };
  });
}

/** The list as a policy stores it: the accepted entries, as typed. */
export function cidrValues(entries: readonly CidrEntry[]): string[] {
  return entries.filter((e) => e.problem === null).map((e) => e.text);
}
