/** The consent routes' bodies and answers. */
import Type from 'typebox';
import { NO_NUL } from '../../platform/http/schemas.js';

const ISO = { format: 'date-time' } as const;
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const PURPOSE_KEY_PATTERN = '^[a-z][a-z0-9_]{1,63}$';
export const MAX_TEXT_LENGTH = 20_000;
export const MAX_CHANGES = 50;

const EXAMPLE_HASH = '5f0b7f6c6f1b9d3c2e8a4f1d0c9b8a7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a';
const EXAMPLE_TEXT = 'I agree that the bank may send me offers and news about its products by email. You can withdraw this consent at any time in the app, as easily as you gave it.';

const languageSchema = (description: string) => Type.Union([Type.Literal('en'), Type.Literal('pt'), Type.Literal('fr')], { description, examples: ['en'] });
export const Language = languageSchema('en, pt or fr.');

export const PurposeKey = Type.String({
  minLength: 2, maxLength: 64, pattern: PURPOSE_KEY_PATTERN, description: 'The purpose\'s key: lower-case letters, digits and `_`, starting with a letter, 2 to 64 long.', examples: ['marketing_email'],
});

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 (hex) of the text\'s UTF-8 bytes, exactly as `body`: a client can check the text it shows.', examples: [EXAMPLE_HASH] });
const Version = Type.Integer({ minimum: 1, description: 'A version of the purpose\'s text, from 1.', examples: [2] });
const Channel = Nullable(Type.String({ description: 'The channel of the session the answer came from (web, mobile, agent, ussd).', examples: ['mobile'] }));

const ShownText = Type.Object({
  version: Version,
  language: Language,
  body: Type.String({ examples: [EXAMPLE_TEXT] }),
  sha256: Sha256,
  published_at: Type.String(ISO),
}, { description: 'The current version\'s text in the language asked for (else the person\'s, else English): what to show before asking.' });

export const ConsentItem = Type.Object({
  purpose: PurposeKey,
  title: Type.String({ examples: ['Offers and news by email'] }),
  required: Type.Boolean({ description: 'Needed to use the service (terms of service): agreed to, never withdrawn here.' }),
  given: Type.Boolean({ description: 'Whether consent is given now (false as well when never answered).' }),
  version: Nullable(Type.Integer({ minimum: 1, description: 'The text version of the last answer; null: never answered.', examples: [1] })),
  current_version: Version,
  newer_version: Type.Boolean({ description: 'Consent was given to an older version: the current one awaits agreement (show `text` and ask again). The consent given stays recorded against its version.' }),
  changed_at: Nullable(Type.String({ ...ISO, description: 'When the last answer was given; null: never answered.' })),
  channel: Channel,
  text: ShownText,
}, { title: 'ConsentState' });

export const HistoryItem = Type.Object({
  purpose: PurposeKey,
  given: Type.Boolean({ description: 'true: consent given; false: withdrawn (or declined at the first answer).' }),
  version: Version,
  language: Language,
  text_hash: Sha256,
  at: Type.String(ISO),
  channel: Channel,
  client_address: Nullable(Type.String({ description: 'The address the answer came from.', examples: ['192.0.2.10'] })),
  user_agent: Nullable(Type.String({ examples: ['StrongroomBank/5.2 (Android 14)'] })),
}, { title: 'ConsentHistoryEntry' });

export const ConsentsAnswer = Type.Object({
  consents: Type.Array(ConsentItem),
  history: Type.Optional(Type.Array(HistoryItem, { description: 'With `history=true`: every answer, oldest first.' })),
}, {
  title: 'Consents',
  examples: [{
    consents: [{
      purpose: 'marketing_email', title: 'Offers and news by email', required: false, given: true, version: 1, current_version: 2, newer_version: true,
      changed_at: '2026-03-02T10:15:00.000Z', channel: 'mobile', text: { version: 2, language: 'en', body: EXAMPLE_TEXT, sha256: EXAMPLE_HASH, published_at: '2026-06-01T08:00:00.000Z' },
    }],
  }],
});

export const ConsentQuery = Type.Object({
  history: Type.Optional(Type.Boolean({ default: false, description: 'true: every answer too, oldest first.' })),
  language: Type.Optional(Language),
}, { additionalProperties: false });

export const ChangeBody = Type.Object({
  consents: Type.Array(Type.Object({
    purpose: PurposeKey,
    given: Type.Boolean({ description: 'true gives consent, false withdraws it.' }),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'The version of the text shown (its `text.version` in `GET /api/v1/auth/consent`): needed to give consent, and it must be the current one. Not needed to withdraw.', examples: [2] })),
    language: Type.Optional(languageSchema('The language of the text shown; absent: the person\'s language (English when the version has none in it).')),
  }, { additionalProperties: false }), { minItems: 1, maxItems: MAX_CHANGES, description: `1 to ${MAX_CHANGES} answers, one per purpose.` }),
}, {
  additionalProperties: false, title: 'ConsentChanges',
  examples: [
    { consents: [{ purpose: 'marketing_email', given: false }, { purpose: 'analytics', given: true, version: 1 }] },
    { consents: [{ purpose: 'terms_of_service', given: true, version: 2, language: 'pt' }] },
  ],
});

export const ChangeAnswer = Type.Object({
  consents: Type.Array(Type.Object({
    purpose: PurposeKey,
    given: Type.Boolean(),
    version: Version,
    changed: Type.Boolean({ description: 'false: the answer was this one already; nothing was recorded.' }),
    changed_at: Type.String({ ...ISO, description: 'When this answer was recorded (the earlier time when nothing changed).' }),
  })),
}, { title: 'ConsentChangesRecorded', examples: [{ consents: [{ purpose: 'marketing_email', given: false, version: 1, changed: true, changed_at: '2026-11-28T09:00:00.000Z' }] }] });

const TextBody = Type.String({ minLength: 1, maxLength: MAX_TEXT_LENGTH, pattern: NO_NUL, description: `The text exactly as people will see it (up to ${MAX_TEXT_LENGTH} characters); its SHA-256 is taken as sent.` });

export const TextsBody = Type.Object({
  en: TextBody,
  pt: Type.Optional(TextBody),
  fr: Type.Optional(TextBody),
}, { additionalProperties: false, description: 'The text per language: English always; Portuguese and French shown to people of those languages (English to them otherwise).' });

export const PurposeDetail = Type.Object({
  purpose: PurposeKey,
  title: Type.String({ examples: ['Offers and news by email'] }),
  required: Type.Boolean(),
  current_version: Version,
  created_at: Type.String(ISO),
  updated_at: Type.String(ISO),
  versions: Type.Array(Type.Object({
    version: Version,
    published_at: Type.String(ISO),
    texts: Type.Array(Type.Object({ language: Language, body: Type.String({ examples: [EXAMPLE_TEXT] }), sha256: Sha256 })),
  }), { description: 'Every version, oldest first: what each person agreed to stays readable.' }),
}, {
  title: 'ConsentPurpose',
  examples: [{
    purpose: 'marketing_email', title: 'Offers and news by email', required: false, current_version: 1, created_at: '2026-01-15T09:00:00.000Z', updated_at: '2026-01-15T09:00:00.000Z',
    versions: [{ version: 1, published_at: '2026-01-15T09:00:00.000Z', texts: [{ language: 'en', body: EXAMPLE_TEXT, sha256: EXAMPLE_HASH }] }],
  }],
});

export const PurposeList = Type.Object({ purposes: Type.Array(PurposeDetail) }, { title: 'ConsentPurposes', examples: [{ purposes: [] }] });

export const CreatePurposeBody = Type.Object({
  key: PurposeKey,
  title: Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description: 'What administrators and the apps call it.', examples: ['Offers and news by push notification'] }),
  required: Type.Boolean({ description: 'true: needed to use the service (people agree to it and cannot withdraw it here); false: optional consent.', examples: [false] }),
  texts: TextsBody,
}, {
  additionalProperties: false, title: 'ConsentPurposeNew',
  examples: [{ key: 'marketing_push', title: 'Offers and news by push notification', required: false, texts: { en: 'I agree that the bank may send me offers by push notification. I can withdraw this consent at any time in the app.' } }],
});

export const PublishBody = Type.Object({ texts: TextsBody }, {
  additionalProperties: false, title: 'ConsentTextVersion',
  examples: [{ texts: { en: 'I agree that the bank and its insurance arm may send me offers by email. I can withdraw this consent at any time in the app.', pt: 'Aceito que o banco e a sua seguradora me enviem ofertas por email. Posso retirar este consentimento a qualquer momento na aplicação.' } }],
});

export const PurposeParams = Type.Object({ purpose: PurposeKey });

export const SubjectsQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^[A-Za-z0-9_-]+$', description: 'The `next_cursor` of the previous page, unchanged; absent for the first page.', examples: ['eyJ2IjoxLCJhZnRlciI6IjNmMGM4YTVlLTJiN2QtNGQ2YS05YTUxLTBjNmIxZTJmNGE3NyJ9'] })),
  min_version: Type.Optional(Type.Integer({ minimum: 1, description: 'Only consents given to this version of the text or a later one.', examples: [2] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'People per page, 1 to 1,000 (default 100).', examples: [100] })),
}, { additionalProperties: false });

export const SubjectPage = Type.Object({
  subjects: Type.Array(Type.Object({
    user_id: Type.String({ format: 'uuid', description: 'The account\'s uuid.' }),
    version: Version,
    given_at: Type.String({ ...ISO, description: 'When the consent was given.' }),
  }, { additionalProperties: false })),
  next_cursor: Nullable(Type.String({ description: 'Send it as `cursor` for the next page; null: this is the last page.' })),
  limit: Type.Integer({ examples: [100] }),
}, {
  title: 'ConsentSubjects', description: 'Who has consent given to the purpose now, in a stable order: their uuid, the version and when. Nothing else about them.',
  examples: [{ subjects: [{ user_id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', version: 2, given_at: '2026-06-03T12:00:00.000Z' }], next_cursor: null, limit: 100 }],
});
