/** The FAQ's ten categories as a select, in the reader's language; `any` adds an entry for all of them. */
import { Button as AriaButton, Label, ListBox, ListBoxItem, Popover, Select, SelectValue } from 'react-aria-components';
import { useI18n } from '../../../lib/i18n.js';
import { FAQ_CATEGORIES, type FaqCategory } from './types.js';

export function CategorySelect({ label, value, onChange, any }: { label: string; value: FaqCategory | ''; onChange(v: FaqCategory | ''): void; any?: string }) {
  const { t } = useI18n();
  return (
    <Select className="field" selectedKey={value} onSelectionChange={(k) => onChange(String(k) as FaqCategory | '')}>
      <Label>{label}</Label>
      <AriaButton className="select-button"><SelectValue /><span aria-hidden="true">▾</span></AriaButton>
      <Popover className="popover">
        <ListBox className="listbox">
          {any ? <ListBoxItem id="" className="listbox-item">{any}</ListBoxItem> : null}
          {FAQ_CATEGORIES.map((c) => <ListBoxItem key={c} id={c} className="listbox-item">{t(`content.category.${c}`)}</ListBoxItem>)}
        </ListBox>
      </Popover>
    </Select>
  );
}
