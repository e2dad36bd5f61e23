import { describe, expect, it } from 'vitest';
import { fitsOneSegment, gsm7Length, SMS_SEGMENT_SEPTETS, smsText, toGsm7 } from './sms.js';

describe('GSM-7 text messages', () => {
  it('letters outside the alphabet lose their accent, the ones inside keep it, anything else becomes ?', () => {
    expect(toGsm7('Não é código, ça coûte')).toBe('Nao é codigo, ca coute');
    expect(toGsm7('Ünïcode → ok')).toBe('Ünicode ? ok');
    expect(toGsm7('à è é ù ì ò Ç')).toBe('à è é ù ì ò Ç');
    expect(toGsm7('ê ô î û ã õ á í ó ú ç È À')).toBe('e o i u a o a i o u c E A');
  });

  it('extension characters count two septets, every other one', () => {
    expect(gsm7Length('a€[b')).toBe(6);
    expect(gsm7Length(toGsm7('Não'))).toBe(3);
    expect(gsm7Length('{}^~|\\')).toBe(12);
  });

  it('one segment is 160 septets, extension characters included', () => {
    expect(SMS_SEGMENT_SEPTETS).toBe(160);
    expect(fitsOneSegment('x'.repeat(160))).toBe(true);
    expect(fitsOneSegment('x'.repeat(161))).toBe(false);
    expect(fitsOneSegment(`${'x'.repeat(159)}€`)).toBe(false);
  });

  it('smsText is the GSM-7 form, and leaves a GSM-7 text as it is', () => {
    expect(smsText('Banco: não foi você?')).toBe('Banco: nao foi voce?');
    const plain = 'Bank: your account will be erased on 2026-12-28 05:00 UTC.';
    expect(smsText(plain)).toBe(plain);
  });
});
