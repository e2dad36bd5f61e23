/**
 * The geofence canvas: an SVG of longitude (x) by latitude (y, north up), with a graticule, the
 * shapes, and the polygon being drawn. No map tiles, nothing fetched. A click reports its
 * coordinates (what it does is the editor's mode); everything it draws is also in the numeric
 * fields beside it, for the keyboard and screen readers.
 */
import type { MouseEvent } from 'react';
import { circleRadii, graticuleStep, ticks, round6, type View } from './geo-view.js';
import type { Geofence } from './types.js';

export function GeoCanvas({ view, shapes, draft, label, onPick }: { view: View; shapes: readonly Geofence[]; draft: ReadonlyArray<readonly [number, number]>; label: string; onPick(lat: number, lon: number): void }) {
  const [west, north, width, height] = [view.lon - view.span, view.lat + view.span / 2, view.span * 2, view.span];
  const step = graticuleStep(view.span);
  const dot = view.span / 120;
  const onClick = (e: MouseEvent<SVGSVGElement>) => {
    const ctm = e.currentTarget.getScreenCTM();
    if (!ctm) return;
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse());
    onPick(round6(-p.y), round6(p.x));
  };
  return (
    <svg className="geo-canvas" viewBox={`${west} ${-north} ${width} ${height}`} preserveAspectRatio="none" role="img" aria-label={label} onClick={onClick} data-view={`${view.lat},${view.lon},${view.span}`}>
      <title>{label}</title>
      <rect className="geo-sea" x={west} y={-north} width={width} height={height} />
      <g className="geo-graticule">
        {ticks(west, west + width, step).map((lon) => <line key={`x${lon}`} x1={lon} x2={lon} y1={-north} y2={-north + height} vectorEffect="non-scaling-stroke" className={lon === 0 ? 'geo-axis' : undefined} />)}
        {ticks(north - height, north, step).map((lat) => <line key={`y${lat}`} y1={-lat} y2={-lat} x1={west} x2={west + width} vectorEffect="non-scaling-stroke" className={lat === 0 ? 'geo-axis' : undefined} />)}
      </g>
      {shapes.map((s, i) => (s.type === 'circle'
        ? <ellipse key={i} className="geo-shape" data-shape="circle" cx={s.lon} cy={-s.lat} {...(({ rx, ry }) => ({ rx, ry }))(circleRadii(s.lat, s.radius_m))} vectorEffect="non-scaling-stroke" />
        : <polygon key={i} className="geo-shape" data-shape="polygon" points={s.points.map(([lat, lon]) => `${lon},${-lat}`).join(' ')} vectorEffect="non-scaling-stroke" />))}
      {draft.length > 0 ? <polyline className="geo-draft" points={draft.map(([lat, lon]) => `${lon},${-lat}`).join(' ')} vectorEffect="non-scaling-stroke" /> : null}
      {draft.map(([lat, lon], i) => <ellipse key={`d${i}`} className="geo-vertex" cx={lon} cy={-lat} rx={dot} ry={dot} />)}
    </svg>
  );
}
