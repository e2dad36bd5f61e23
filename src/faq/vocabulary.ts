/**
 * The vocabulary the typo fallback corrects against (`faq_words`: every word of the active
 * articles and how many use it), held by each node in memory, so that correcting a query costs
 * no round trip. Loaded at first use; dropped when an article changes on any node (the bus's
 * `faq.changed`, published after the change commits), when the bus reconnects (a notice may
 * have been lost), and after MAX_AGE_MS all the same.
 *
 * Which words may stand for a query word is the rule the SQL version had: the word itself; a
 * word starting with the same letter whose length and Levenshtein distance are within a bound
 * that grows with the word (1 up to three letters, 2 up to seven, else 3); or a word similar by
 * trigrams as pg_trgm counts them (at least 0.3). Of those, `nearest` (search.ts) takes the
 * fewest edits, a swap counting as one, then the most common word.
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Logger } from 'pino';

export interface Word {
  word: string;
  ndoc: number;
}

/** Re-read at least this often, whatever the bus says. */
export const MAX_AGE_MS = 60_000;
const TRIGRAM_THRESHOLD = 0.3;

/** pg_trgm's trigrams of a word: lower case, padded with two spaces in front and one behind. */
export function trigrams(word: string): Set<string> {
  const out = new Set<string>();
  for (const part of word.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const padded = [...`  ${part} `];
    for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3).join(''));
  }
  return out;
}

/** Levenshtein distance, or `max + 1` as soon as it must exceed `max`. */
function levenshteinWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

const maxDistance = (word: string): number => (word.length <= 3 ? 1 : word.length <= 7 ? 2 : 3);

class Index {
  private readonly byWord = new Map<string, Word>();
  private readonly byTrigram = new Map<string, number[]>();
  private readonly trigramCount: number[] = [];

  constructor(readonly words: Word[]) {
    words.forEach((w, i) => {
      this.byWord.set(w.word, w);
      const grams = trigrams(w.word);
      this.trigramCount.push(grams.size);
      for (const g of grams) {
        const list = this.byTrigram.get(g);
        if (list) list.push(i);
        else this.byTrigram.set(g, [i]);
      }
    });
  }

  /** The words that may stand for `input` (the rule above). */
  candidates(input: string): Word[] {
    const exact = this.byWord.get(input);
    const out = new Map<string, Word>(exact ? [[exact.word, exact]] : []);
    const max = maxDistance(input);
    for (const w of this.words) {
      if (w.word[0] === input[0] && Math.abs(w.word.length - input.length) <= max && levenshteinWithin(w.word, input, max) <= max) out.set(w.word, w);
    }
    const grams = trigrams(input);
    const shared = new Map<number, number>();
    for (const g of grams) for (const i of this.byTrigram.get(g) ?? []) shared.set(i, (shared.get(i) ?? 0) + 1);
    for (const [i, n] of shared) {
      if (n / (grams.size + this.trigramCount[i]! - n) >= TRIGRAM_THRESHOLD) out.set(this.words[i]!.word, this.words[i]!);
    }
    return [...out.values()];
  }
}

export class Vocabulary {
  private index: Index | null = null;
  private loadedAt = 0;
  private loading: Promise<Index> | null = null;
  private generation = 0;

  constructor(private readonly deps: { db: Db; clock: Clock; bus: EventBus; log: Logger }) {
    deps.bus.subscribe((e) => {
      if (e.type === 'faq.changed') this.drop();
    });
    deps.bus.onReconnect(() => this.drop());
  }

  private drop(): void {
    this.index = null;
    this.loading = null; // a load under way read the words before the change: the next caller reads again
    this.generation++;
  }

  /**
   * The words that may stand for `input`. `db`: where to read them if they must be read (the
   * caller's transaction on PGlite, whose one connection that transaction holds).
   */
  async candidates(input: string, db: Db = this.deps.db): Promise<Word[]> {
    return (await this.current(db)).candidates(input);
  }

  /**
   * Tells every node (this one at once) that the articles changed; call after the change
   * committed. Never fails the change: a notice that cannot be sent is logged, and the other
   * nodes' copies expire within MAX_AGE_MS all the same.
   */
  async changed(): Promise<void> {
    this.drop();
    await this.deps.bus.publish({ type: 'faq.changed' }).catch((err: unknown) => this.deps.log.warn({ err }, 'could not tell the other nodes that the FAQ changed; their typo fallback catches up within a minute'));
  }

  private async current(db: Db): Promise<Index> {
    if (this.index && this.deps.clock.now() - this.loadedAt < MAX_AGE_MS) return this.index;
    // One load at a time; a change announced during a load makes the next caller load again.
    if (!this.loading) {
      const loading: Promise<Index> = this.load(db).finally(() => {
        if (this.loading === loading) this.loading = null;
      });
      this.loading = loading;
    }
    return this.loading;
  }

  private async load(db: Db): Promise<Index> {
    const generation = this.generation;
    const startedAt = this.deps.clock.now();
    const { rows } = await sql<Word>`SELECT word, ndoc FROM faq_words ORDER BY word`.execute(db);
    const index = new Index(rows);
    if (generation === this.generation) {
      this.index = index;
      this.loadedAt = startedAt;
    }
    return index;
  }
}
