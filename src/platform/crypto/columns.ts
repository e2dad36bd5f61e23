/**
 * Every encrypted column, in one place: the purpose its key is derived for (one FieldCipher per
 * purpose) and the context bound to each value as additional authenticated data. The writers
 * and the re-encryption pass (reencrypt.ts) both read it, so they cannot drift apart.
 */
export const ENCRYPTED_COLUMNS = {
  usersEmail: { purpose: 'columns', context: 'users.email' },
  usersPhone: { purpose: 'columns', context: 'users.phone' },
  sessionKey: { purpose: 'columns', context: 'sessions.aes_key' },
  passwordCopy: { purpose: 'credential-copy', context: 'credentials.password_enc' },
  jwtSecret: { purpose: 'jwt-keyring', context: 'jwt_signing_keys.secret' },
  transportKey: { purpose: 'transport-keyring', context: 'transport_keys.private_pem' },
  totpSecret: { purpose: 'mfa-secrets', context: 'mfa_factors.secret' },
  ldapBindPassword: { purpose: 'idp-secrets', context: 'ldap_config.bind_password' },
  samlSpKey: { purpose: 'idp-secrets', context: 'saml_sp_keys.private_key' },
  devicePushToken: { purpose: 'columns', context: 'device_tokens.push_token' },
  usersDateOfBirth: { purpose: 'columns', context: 'users.date_of_birth' },
  contactChangeValue: { purpose: 'columns', context: 'profile_contact_changes.new_value' },
} as const;
