/**
 * A policy's geofences: circles and polygons drawn on the coordinate canvas (a click places a
 * circle's centre at the chosen radius, or adds a point to the polygon being drawn) or added and
 * set from the keyboard with the numeric fields; each listed with its numbers and a delete.
 */
import { useState } from 'react';
import { Input, Label, NumberField, Radio, RadioGroup } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { Button } from '../../ui/forms.js';
import { GeoCanvas } from './GeoCanvas.js';
import { fit, round6, type View } from './geo-view.js';
import { ShapeFields } from './ShapeFields.js';
import type { Geofence } from './types.js';

type Mode = 'none' | 'circle' | 'polygon';

export function GeofenceEditor({ shapes, onChange, serverError }: { shapes: Geofence[]; onChange(s: Geofence[]): void; serverError?: string }) {
  const { t } = useI18n();
  const [view, setView] = useState<View>(() => fit(shapes));
  const [mode, setMode] = useState<Mode>('none');
  const [radius, setRadius] = useState(500);
  const [draft, setDraft] = useState<Array<[number, number]>>([]);
  const add = (s: Geofence) => onChange([...shapes, s]);
  const onPick = (lat: number, lon: number) => {
    if (mode === 'circle') add({ type: 'circle', lat, lon, radius_m: radius });
    if (mode === 'polygon') setDraft([...draft, [lat, lon]]);
  };
  const d = view.span / 8;
  const names = shapes.map((s, i) => t(s.type === 'circle' ? 'policies.geo.circleN' : 'policies.geo.polygonN', { n: i + 1 }));
  return (
    <fieldset className="geofences">
      <legend>{t('policies.geo.title')}</legend>
      <p className="description">{t('policies.geo.hint')}</p>
      <div className="geo-tools">
        <RadioGroup className="field radios" value={mode} onChange={(m) => { setMode(m as Mode); setDraft([]); }}>
          <Label>{t('policies.geo.mode')}</Label>
          <Radio value="none">{t('policies.geo.modeNone')}</Radio>
          <Radio value="circle">{t('policies.geo.modeCircle')}</Radio>
          <Radio value="polygon">{t('policies.geo.modePolygon')}</Radio>
        </RadioGroup>
        <NumberField className="field number" value={radius} minValue={1} maxValue={100_000} onChange={(v) => { if (Number.isFinite(v)) setRadius(v); }}>
          <Label>{t('policies.geo.radius')}</Label>
          <Input />
        </NumberField>
      </div>
      <GeoCanvas view={view} shapes={shapes} draft={draft} label={t('policies.geo.canvas')} onPick={onPick} />
      <p className="description">{t('policies.geo.showing', { south: round6(view.lat - view.span / 2), north: round6(view.lat + view.span / 2), west: round6(view.lon - view.span), east: round6(view.lon + view.span) })}</p>
      <p className="actions">
        <Button variant="secondary" onPress={() => setView(fit(shapes))}>{t('policies.geo.fit')}</Button>
        <Button variant="secondary" onPress={() => setView({ ...view, span: view.span / 2 })}>{t('policies.geo.zoomIn')}</Button>
        <Button variant="secondary" onPress={() => setView({ ...view, span: Math.min(180, view.span * 2) })}>{t('policies.geo.zoomOut')}</Button>
        {mode === 'polygon' ? <Button isDisabled={draft.length < 3} onPress={() => { add({ type: 'polygon', points: draft }); setDraft([]); }}>{t('policies.geo.finish', { count: draft.length })}</Button> : null}
        {draft.length > 0 ? <Button variant="secondary" onPress={() => setDraft([])}>{t('policies.geo.discard')}</Button> : null}
      </p>
      <p className="actions">
        <Button variant="secondary" onPress={() => add({ type: 'circle', lat: round6(view.lat), lon: round6(view.lon), radius_m: radius })}>{t('policies.geo.addCircle')}</Button>
        <Button variant="secondary" onPress={() => add({ type: 'polygon', points: [[view.lat + d, view.lon], [view.lat - d, view.lon + d], [view.lat - d, view.lon - d]].map(([a, b]) => [round6(a!), round6(b!)] as [number, number]) })}>{t('policies.geo.addPolygon')}</Button>
      </p>
      {serverError ? <p className="field-error" role="alert">{serverError}</p> : null}
      {shapes.length === 0 ? <p>{t('policies.geo.none')}</p> : shapes.map((s, i) => (
        <ShapeFields key={i} shape={s} name={names[i]!} onChange={(next) => onChange(shapes.map((q, j) => (j === i ? next : q)))} onDelete={() => onChange(shapes.filter((_, j) => j !== i))} />
      ))}
    </fieldset>
  );
}
