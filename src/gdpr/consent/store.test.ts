import { describe, expect, it } from 'vitest';
import { SEED_PURPOSES } from '../../platform/db/migrations/034-consent.js';
import { PURPOSE_KEY_PATTERN } from './schemas.js';
import { pickText, textHash } from './store.js';

describe('consent texts', () => {
  it('hashes the exact UTF-8 text with SHA-256 (hex), so a client can check what it shows', () => {
    expect(textHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    // Accents are hashed as their UTF-8 bytes, and nothing is trimmed or normalised.
    expect(textHash('\u00e9')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
    expect(textHash('\u00e9')).not.toBe(textHash('e\u0301'));
    expect(textHash('abc ')).not.toBe(textHash('abc'));
  });

  it('picks the text of the language asked for, else the English one', () => {
    const texts = [{ language: 'en' as const, body: 'en' }, { language: 'fr' as const, body: 'fr' }];
    expect(pickText(texts, 'fr')!.body).toBe('fr');
    expect(pickText(texts, 'pt')!.body).toBe('en');
    expect(pickText([], 'en')).toBeUndefined();
  });

  it('seeds five purposes with a valid key, an English, Portuguese and French text each, the terms of service alone required', () => {
    expect(SEED_PURPOSES.map((p) => p.key)).toEqual(['terms_of_service', 'marketing_email', 'marketing_sms', 'analytics', 'partner_sharing']);
    for (const p of SEED_PURPOSES) {
      expect(p.key).toMatch(new RegExp(PURPOSE_KEY_PATTERN));
      expect(Object.keys(p.texts).sort()).toEqual(['en', 'fr', 'pt']);
      for (const body of Object.values(p.texts)) expect(body.trim().length).toBeGreaterThan(20);
    }
    expect(SEED_PURPOSES.filter((p) => p.required).map((p) => p.key)).toEqual(['terms_of_service']);
  });
});
