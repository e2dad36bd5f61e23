/**
 * A CIDR list (IPv4 and IPv6), one block a line or separated by commas, judged as it is typed by
 * the server's own parser (src/access/cidr-input.ts): each bad entry is named under the field,
 * and the server's own refusal (a 422 naming `rules.ip.allow[2]`) shows there too.
 */
import { FieldError, Label, Text, TextArea, TextField } from 'react-aria-components';
import { parseCidrList, type CidrProblem } from '../../../../../src/access/cidr-input.js';
import { useI18n, type MessageKey } from '../../lib/i18n.js';

const PROBLEM: Record<CidrProblem, MessageKey> = {
  address: 'policies.cidr.address',
  prefix: 'policies.cidr.prefix',
  mapped_prefix: 'policies.cidr.mappedPrefix',
  zone: 'policies.cidr.zone',
  duplicate: 'policies.cidr.duplicate',
};

export function CidrField({ label, description, value, onChange, serverError }: { label: string; description: string; value: string; onChange(v: string): void; serverError?: string }) {
  const { t } = useI18n();
  const bad = parseCidrList(value).filter((e) => e.problem !== null);
  const messages = [...bad.map((e) => t(PROBLEM[e.problem!], { entry: e.text })), ...(serverError ? [serverError] : [])];
  return (
    <TextField className="field" value={value} onChange={onChange} isInvalid={messages.length > 0} validationBehavior="aria">
      <Label>{label}</Label>
      <TextArea className="cidr-input" rows={4} spellCheck={false} />
      <Text slot="description" className="description">{description}</Text>
      <FieldError className="field-error">
        <ul className="problems">{messages.map((m) => <li key={m}>{m}</li>)}</ul>
      </FieldError>
    </TextField>
  );
}
