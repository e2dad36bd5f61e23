/**
 * Bank branches ("entities", SPEC's SAML step 5: "the branch attribute selects an entity by its
 * code, and a user-entity link is created"), managed by administrators (permission
 * `entities.manage`). A code is unique without regard to case, as an IdP may send it in either.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE entities (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      code text NOT NULL,
      name text NOT NULL,
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE UNIQUE INDEX entities_code ON entities (lower(code));

    CREATE TABLE user_entities (
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      entity_id integer NOT NULL REFERENCES entities(id) ON DELETE RESTRICT,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, entity_id)
    );
    CREATE INDEX user_entities_entity ON user_entities (entity_id);
  `);
  await sql`INSERT INTO permissions (name, description) VALUES ('entities.manage', 'Create, rename and deactivate bank branches (entities)')`.execute(db);
  await grantAllToAdmin(db);
}
