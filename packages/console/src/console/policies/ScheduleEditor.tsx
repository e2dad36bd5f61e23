/**
 * A policy's schedule: the hours of the week when sign-in is allowed (days × hours, Monday
 * first), in a time zone chosen from the browser's list (Intl.supportedValuesOf), with the time
 * it is there now; a zone's whole name typed selects it. Written back as the policy's windows (src/access/schedule-grid.ts). No hour
 * ticked: no schedule (any time).
 */
import { useEffect, useState } from 'react';
import { Button as AriaButton, ComboBox, Input, Label, ListBox, ListBoxItem, Popover, Text } from 'react-aria-components';
import { emptyGrid, gridOf, windowsOf, type HourGrid } from '../../../../../src/access/schedule-grid.js';
import type { ScheduleWindow } from '../../../../../src/access/rules/schedule.js';
import { ARIA_LOCALES, useI18n } from '../../lib/i18n.js';
import { Button, Notice } from '../../ui/forms.js';

const ZONES: ReadonlyArray<{ id: string; name: string }> = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')].map((z) => ({ id: z, name: z }));
const ZONE_NAMES = new Set(ZONES.map((z) => z.id));
const HOURS = Array.from({ length: 24 }, (_, h) => h);
const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;

/** The current time in `zone`, in the reader's language, refreshed every 20 seconds. */
function useNowIn(zone: string, locale: string): string {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 20_000);
    return () => clearInterval(timer);
  }, []);
  return new Intl.DateTimeFormat(locale, { timeZone: zone, weekday: 'long', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }).format(now);
}

function ZonePicker({ zone, onChange }: { zone: string; onChange(z: string): void }) {
  const { t } = useI18n();
  return (
    <ComboBox className="field" selectedKey={zone} onSelectionChange={(k) => { if (k !== null) onChange(String(k)); }} onInputChange={(v) => { if (v !== zone && ZONE_NAMES.has(v)) onChange(v); }} defaultItems={ZONES}>
      <Label>{t('policies.schedule.zone')}</Label>
      <div className="combo"><Input /><AriaButton className="select-button combo-button" aria-label={t('policies.schedule.zones')}><span aria-hidden="true">▾</span></AriaButton></div>
      <Popover className="popover">
        <ListBox className="listbox zone-list">{(item: { id: string; name: string }) => <ListBoxItem id={item.id} className="listbox-item">{item.name}</ListBoxItem>}</ListBox>
      </Popover>
    </ComboBox>
  );
}

export function ScheduleEditor({ windows, onChange, serverError }: { windows: ScheduleWindow[]; onChange(w: ScheduleWindow[]): void; serverError?: string }) {
  const { t, language } = useI18n();
  const drawn = gridOf(windows);
  const [zone, setZone] = useState(() => drawn.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
  const now = useNowIn(zone, ARIA_LOCALES[language]);
  const dayName = (d: number) => new Intl.DateTimeFormat(ARIA_LOCALES[language], { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2024, 0, 1 + d));
  const write = (grid: HourGrid, z = zone) => onChange(windowsOf(grid, z));
  const toggle = (d: number, h: number) => write(drawn.grid.map((hours, i) => (i === d ? hours.map((on, j) => (j === h ? !on : on)) : hours)));
  return (
    <fieldset className="schedule">
      <legend>{t('policies.schedule.title')}</legend>
      <p className="description">{t('policies.schedule.hint')}</p>
      <ZonePicker zone={zone} onChange={(z) => { setZone(z); write(drawn.grid, z); }} />
      <p className="now-there">{t('policies.schedule.now', { zone, now })}</p>
      {drawn.exact ? null : <Notice>{t('policies.schedule.inexact')}</Notice>}
      <div className="schedule-scroll">
        <table className="schedule-grid">
          <caption>{t('policies.schedule.caption', { zone })}</caption>
          <thead><tr><th scope="col">{t('policies.schedule.day')}</th>{HOURS.map((h) => <th key={h} scope="col" abbr={hh(h)}>{String(h).padStart(2, '0')}</th>)}</tr></thead>
          <tbody>
            {drawn.grid.map((hours, d) => (
              <tr key={d}>
                <th scope="row">{dayName(d)}</th>
                {hours.map((on, h) => (
                  <td key={h}><input type="checkbox" className="hour" checked={on} onChange={() => toggle(d, h)} aria-label={t('policies.schedule.cell', { day: dayName(d), from: hh(h), to: hh(h + 1) })} /></td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Text className="description">{windows.length === 0 ? t('policies.schedule.anyTime') : t('policies.schedule.windows', { count: windows.length })}</Text>
      {serverError ? <p className="field-error" role="alert">{serverError}</p> : null}
      <p className="actions"><Button variant="secondary" onPress={() => write(emptyGrid())}>{t('policies.schedule.clear')}</Button></p>
    </fieldset>
  );
}
