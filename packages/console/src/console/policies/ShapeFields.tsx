/** The numbers of one geofence: a circle's centre and radius, or a polygon's points; each editable from the keyboard. */
import { Input, Label, NumberField } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { Button } from '../../ui/forms.js';
import type { Geofence } from './types.js';

const DEGREES = { maximumFractionDigits: 6 } as const;

function Num({ label, value, min, max, onChange }: { label: string; value: number; min: number; max: number; onChange(v: number): void }) {
  return (
    <NumberField className="field number" value={value} minValue={min} maxValue={max} formatOptions={DEGREES} onChange={(v) => { if (Number.isFinite(v)) onChange(v); }}>
      <Label>{label}</Label>
      <Input />
    </NumberField>
  );
}

export function ShapeFields({ shape, name, onChange, onDelete }: { shape: Geofence; name: string; onChange(s: Geofence): void; onDelete(): void }) {
  const { t } = useI18n();
  if (shape.type === 'circle') {
    return (
      <fieldset className="shape">
        <legend>{name}</legend>
        <div className="shape-row">
          <Num label={t('policies.geo.latitudeOf', { shape: name })} value={shape.lat} min={-90} max={90} onChange={(lat) => onChange({ ...shape, lat })} />
          <Num label={t('policies.geo.longitudeOf', { shape: name })} value={shape.lon} min={-180} max={180} onChange={(lon) => onChange({ ...shape, lon })} />
          <Num label={t('policies.geo.radiusOf', { shape: name })} value={shape.radius_m} min={1} max={100_000} onChange={(radius_m) => onChange({ ...shape, radius_m })} />
        </div>
        <Button variant="danger" onPress={onDelete}>{t('policies.geo.delete', { shape: name })}</Button>
      </fieldset>
    );
  }
  const setPoint = (i: number, p: readonly [number, number]) => onChange({ ...shape, points: shape.points.map((q, j) => (j === i ? p : q)) });
  return (
    <fieldset className="shape">
      <legend>{name}</legend>
      {shape.points.map(([lat, lon], i) => {
        const point = t('policies.geo.point', { shape: name, n: i + 1 });
        return (
          <div key={i} className="shape-row">
            <Num label={t('policies.geo.latitudeOf', { shape: point })} value={lat} min={-85} max={85} onChange={(v) => setPoint(i, [v, lon])} />
            <Num label={t('policies.geo.longitudeOf', { shape: point })} value={lon} min={-180} max={180} onChange={(v) => setPoint(i, [lat, v])} />
            <Button variant="secondary" isDisabled={shape.points.length <= 3} onPress={() => onChange({ ...shape, points: shape.points.filter((_, j) => j !== i) })}>{t('policies.geo.removePoint', { point })}</Button>
          </div>
        );
      })}
      <p className="actions">
        <Button variant="secondary" onPress={() => onChange({ ...shape, points: [...shape.points, shape.points[shape.points.length - 1]!] })}>{t('policies.geo.addPoint', { shape: name })}</Button>
        <Button variant="danger" onPress={onDelete}>{t('policies.geo.delete', { shape: name })}</Button>
      </p>
    </fieldset>
  );
}
