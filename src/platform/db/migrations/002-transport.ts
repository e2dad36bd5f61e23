/** Transport-encryption key pairs, shared by every node; private halves wrapped by the master key. */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE transport_keys (
      version integer GENERATED ALWAYS AS IDENTITY UNIQUE,
      key_id text PRIMARY KEY,
      private_pem_enc text NOT NULL,
      public_pem text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    );
    ALTER TABLE sessions ADD COLUMN aes_key_expires_at timestamptz;
  `);
}
