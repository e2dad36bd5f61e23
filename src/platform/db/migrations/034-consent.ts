/**
 * Consent (issue 28): the purposes the bank asks consent for, each with its versioned texts (one
 * row per version and language, with the SHA-256 of the exact text), every person's answers as
 * an append-only history, and their current answer per purpose (`user_consents`, which names the
 * history row it repeats). A consent is proven by its history row: who, which purpose, which
 * version and language, the hash of that text, given or withdrawn, when, on which channel, from
 * which address and user agent. History rows point at the text rows (no purpose or version with
 * answers can disappear). Permissions `consent.manage` (purposes and their texts) and
 * `consent.read` (who consented to a purpose), granted to the built-in `admin` role.
 *
 * Five purposes are seeded, version 1 in English, Portuguese and French, so a fresh install has
 * what the apps ask on first use; the bank publishes its own wording as version 2 before going
 * live (the people who agreed to version 1 are then shown that a newer version awaits them).
 * Expand only: new tables and rows.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

interface SeedPurpose {
  key: string;
  title: string;
  required: boolean;
  texts: { en: string; pt: string; fr: string };
}

const WITHDRAW = {
  en: 'You can withdraw this consent at any time in the app, as easily as you gave it.',
  pt: 'Pode retirar este consentimento a qualquer momento na aplicação, tão facilmente como o deu.',
  fr: 'Vous pouvez retirer ce consentement à tout moment dans l\'application, aussi facilement que vous l\'avez donné.',
};

function optional(en: string, pt: string, fr: string): SeedPurpose['texts'] {
  return { en: `${en} ${WITHDRAW.en}`, pt: `${pt} ${WITHDRAW.pt}`, fr: `${fr} ${WITHDRAW.fr}` };
}

export const SEED_PURPOSES: readonly SeedPurpose[] = [
  {
    key: 'terms_of_service', title: 'Terms of service', required: true, texts: {
      en: 'I have read and accept the terms of service of the bank\'s digital services.',
      pt: 'Li e aceito os termos de serviço dos serviços digitais do banco.',
      fr: 'J\'ai lu et j\'accepte les conditions d\'utilisation des services numériques de la banque.',
    },
  },
  {
    key: 'marketing_email', title: 'Offers and news by email', required: false, texts: optional(
      'I agree that the bank may send me offers and news about its products by email.',
      'Aceito que o banco me envie ofertas e novidades sobre os seus produtos por email.',
      'J\'accepte que la banque m\'envoie par e-mail des offres et des nouvelles sur ses produits.',
    ),
  },
  {
    key: 'marketing_sms', title: 'Offers and news by SMS', required: false, texts: optional(
      'I agree that the bank may send me offers and news about its products by SMS.',
      'Aceito que o banco me envie ofertas e novidades sobre os seus produtos por SMS.',
      'J\'accepte que la banque m\'envoie par SMS des offres et des nouvelles sur ses produits.',
    ),
  },
  {
    key: 'analytics', title: 'Analysis of how the apps are used', required: false, texts: optional(
      'I agree that the bank may analyse how I use its apps (screens visited, features used) to improve them.',
      'Aceito que o banco analise a forma como utilizo as suas aplicações (ecrãs visitados, funcionalidades usadas) para as melhorar.',
      'J\'accepte que la banque analyse mon utilisation de ses applications (écrans consultés, fonctions utilisées) pour les améliorer.',
    ),
  },
  {
    key: 'partner_sharing', title: 'Sharing with partners', required: false, texts: optional(
      'I agree that the bank may share my name and contact details with its partners so that they can offer me their products.',
      'Aceito que o banco partilhe o meu nome e os meus contactos com os seus parceiros para que me possam propor os seus produtos.',
      'J\'accepte que la banque communique mon nom et mes coordonnées à ses partenaires afin qu\'ils me proposent leurs produits.',
    ),
  },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE consent_purposes (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL UNIQUE CHECK (key ~ '^[a-z][a-z0-9_]{1,63}$'),
      title text NOT NULL,
      required boolean NOT NULL,
      current_version integer NOT NULL CHECK (current_version >= 1),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );

    CREATE TABLE consent_texts (
      purpose_id integer NOT NULL REFERENCES consent_purposes(id),
      version integer NOT NULL CHECK (version >= 1),
      language text NOT NULL CHECK (language IN ('en', 'pt', 'fr')),
      body text NOT NULL,
      sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      published_at timestamptz NOT NULL,
      published_by uuid,
      PRIMARY KEY (purpose_id, version, language)
    );

    CREATE TABLE consent_history (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      purpose_id integer NOT NULL,
      version integer NOT NULL,
      language text NOT NULL,
      text_hash text NOT NULL,
      given boolean NOT NULL,
      at timestamptz NOT NULL,
      channel text,
      client_address text,
      user_agent text,
      FOREIGN KEY (purpose_id, version, language) REFERENCES consent_texts (purpose_id, version, language)
    );
    CREATE INDEX consent_history_user ON consent_history (user_id, id);

    CREATE TABLE user_consents (
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      purpose_id integer NOT NULL REFERENCES consent_purposes(id),
      history_id integer NOT NULL UNIQUE REFERENCES consent_history(id),
      given boolean NOT NULL,
      version integer NOT NULL,
      changed_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, purpose_id)
    );
    CREATE INDEX user_consents_given ON user_consents (purpose_id, user_id) WHERE given;
  `);
  const now = new Date();
  for (const p of SEED_PURPOSES) {
    const { id } = (await sql<{ id: number }>`INSERT INTO consent_purposes (key, title, required, current_version, created_at, updated_at)
      VALUES (${p.key}, ${p.title}, ${p.required}, 1, ${now}, ${now}) RETURNING id`.execute(db)).rows[0]!;
    for (const [language, body] of Object.entries(p.texts)) {
      const sha256 = createHash('sha256').update(body, 'utf8').digest('hex');
      await sql`INSERT INTO consent_texts (purpose_id, version, language, body, sha256, published_at) VALUES (${id}, 1, ${language}, ${body}, ${sha256}, ${now})`.execute(db);
    }
  }
  await sql`INSERT INTO permissions (name, description) VALUES
    ('consent.manage', 'List the consent purposes with every version of their texts, create purposes and publish new versions of their texts'),
    ('consent.read', 'List who consented to a purpose (their ids, the version and when; nothing else), for a campaign')`.execute(db);
  await grantAllToAdmin(db);
}
