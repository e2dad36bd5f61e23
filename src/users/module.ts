/** Users, their roles and permissions; email and phone encrypted at rest when DB_FIELD_ENCRYPTION=1. */
import type { Config } from '../platform/config.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import { SensitiveColumns } from '../platform/crypto/sensitive.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import { UserStore } from './store.js';

export interface UsersDeps {
  db: Db;
  config: Pick<Config, 'dbFieldEncryption'>;
  keys: KeyMaterial;
}

export interface UsersProvides {
  users: UserStore;
  /** Encrypts sensitive columns when DB_FIELD_ENCRYPTION=1 (users' email and phone, session keys). */
  sensitive: SensitiveColumns;
}

export function usersModule(deps: UsersDeps): Module<UsersProvides> {
  const sensitive = new SensitiveColumns(deps.keys.cipher(ENCRYPTED_COLUMNS.usersEmail.purpose), deps.config.dbFieldEncryption);
  const users = new UserStore(deps.db, { sensitive, blindIndex: deps.keys.blindIndex('blind-index') });
  return { name: 'users', provides: { users, sensitive } };
}
