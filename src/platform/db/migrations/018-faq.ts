/**
 * The FAQ knowledge base (issue 13; SPEC "FAQ"):
 * - `faqs`: SPEC's fields, plus `search`, a stored tsvector of the question (weight A), the
 *   keywords (B) and the answer (C), under the `english` configuration (stemming: "transfers"
 *   finds "transfer"), with a GIN index over active articles (no pending list: articles change
 *   rarely and are searched all the time); and `head`, the question and keywords alone, indexed
 *   too: the first tier of the ranking, small enough to rank quickly (src/faq/search.ts). The same SQL runs on PGlite.
 * - `faq_votes`: one vote per voter (a signed-in user, or an anonymous client network, keyed by
 *   an HMAC) per article; the primary key is the reservation that keeps a voter from counting twice.
 * - `faq_words`: the vocabulary of active articles (every word, unstemmed), with a trigram index:
 *   the typo fallback corrects a query's unknown words to their nearest known word (`levenshtein`
 *   from fuzzystrmatch, `similarity` from pg_trgm). Refreshed in
 *   the transaction of every change to the articles.
 * - permissions `faq.manage` (administrators) and `access_ai_chat` (SPEC: every user with
 *   assistant chat access; given to customers, staff and agents).
 */
import { sql, type Kysely } from 'kysely';
import { FAQ_CATEGORIES } from '../../../faq/categories.js';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const categories = FAQ_CATEGORIES.map((c) => `'${c}'`).join(', ');
  await runScript(db, `
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;

    CREATE TABLE faqs (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      question text NOT NULL,
      answer text NOT NULL,
      category text NOT NULL CHECK (category IN (${categories})),
      keywords text NOT NULL DEFAULT '',
      "order" integer NOT NULL DEFAULT 0,
      is_active boolean NOT NULL DEFAULT true,
      helpful_count integer NOT NULL DEFAULT 0 CHECK (helpful_count >= 0),
      unhelpful_count integer NOT NULL DEFAULT 0 CHECK (unhelpful_count >= 0),
      created_on timestamptz NOT NULL,
      updated_on timestamptz NOT NULL,
      search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', question), 'A') ||
        setweight(to_tsvector('english', replace(keywords, ',', ' ')), 'B') ||
        setweight(to_tsvector('english', answer), 'C')
      ) STORED,
      head tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', question), 'A') ||
        setweight(to_tsvector('english', replace(keywords, ',', ' ')), 'B')
      ) STORED
    );
    CREATE INDEX faqs_search ON faqs USING gin (search) WITH (fastupdate = off) WHERE is_active;
    CREATE INDEX faqs_head ON faqs USING gin (head) WITH (fastupdate = off) WHERE is_active;
    CREATE INDEX faqs_category_order ON faqs (category, "order", id) WHERE is_active;

    CREATE TABLE faq_votes (
      faq_id integer NOT NULL REFERENCES faqs(id) ON DELETE CASCADE,
      voter text NOT NULL,
      vote text NOT NULL CHECK (vote IN ('helpful', 'unhelpful')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (faq_id, voter)
    );

    CREATE MATERIALIZED VIEW faq_words AS
      SELECT w.word, count(*)::integer AS ndoc
      FROM faqs f, unnest(tsvector_to_array(to_tsvector('simple', f.question || ' ' || replace(f.keywords, ',', ' ') || ' ' || f.answer))) AS w(word)
      WHERE f.is_active
      GROUP BY w.word;
    CREATE UNIQUE INDEX faq_words_word ON faq_words (word);
    CREATE INDEX faq_words_trgm ON faq_words USING gin (word gin_trgm_ops);
    CREATE INDEX faq_words_prefix ON faq_words (left(word, 1), length(word));
  `);
  await sql`INSERT INTO permissions (name, description) VALUES ('faq.manage', 'Create, edit, reorder, import and export FAQ articles'), ('access_ai_chat', 'Use the assistant (chat) tools')`.execute(db);
  await sql`
    INSERT INTO role_permissions (role_id, permission_id)
    SELECT r.id, p.id FROM roles r CROSS JOIN permissions p
    WHERE r.name IN ('customer', 'staff', 'agent') AND p.name = 'access_ai_chat'`.execute(db);
  await grantAllToAdmin(db);
}
