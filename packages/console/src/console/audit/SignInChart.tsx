/**
 * Sign-ins (above the line) and failed sign-ins (below it) over time, stacked by channel: an SVG
 * drawn here (no chart library), named by its <title> and summarised by its <desc>, with the same
 * numbers as a table for whoever would rather read them.
 */
import { useId } from 'react';
import { ARIA_LOCALES, useI18n } from '../../lib/i18n.js';
import { total, type ChartData } from './chart-data.js';

const W = 720;
const H = 260;
const LEFT = 48;
const RIGHT = 8;
const TOP = 16;
const BOTTOM = 28;

function channelClass(channel: string): string {
  return ['web', 'mobile', 'ussd', 'agent', 'none'].includes(channel) ? `chart-${channel}` : 'chart-other';
}

export function SignInChart({ data, complete }: { data: ChartData; complete: boolean }) {
  const { t, language } = useI18n();
  const id = useId();
  const day = data.unit >= 86_400_000;
  const fmt = new Intl.DateTimeFormat(ARIA_LOCALES[language], day ? { dateStyle: 'medium' } : { dateStyle: 'short', timeStyle: 'short' });
  const label = (at: number) => fmt.format(new Date(at));
  const channelName = (c: string) => (c === 'none' ? t('audit.noChannel') : c);
  const up = Math.max(1, ...data.buckets.map((b) => total(b.signIns)));
  const down = Math.max(1, ...data.buckets.map((b) => total(b.failures)));
  const plot = H - TOP - BOTTOM;
  const base = TOP + (plot * up) / (up + down);
  const scale = plot / (up + down);
  const slot = (W - LEFT - RIGHT) / data.buckets.length;
  const barW = Math.max(1, slot * 0.7);
  const signIns = data.buckets.reduce((n, b) => n + total(b.signIns), 0);
  const failures = data.buckets.reduce((n, b) => n + total(b.failures), 0);
  const byChannel = data.channels.map((c) => t('audit.chartChannel', {
    channel: channelName(c),
    signIns: data.buckets.reduce((n, b) => n + (b.signIns[c] ?? 0), 0),
    failures: data.buckets.reduce((n, b) => n + (b.failures[c] ?? 0), 0),
  })).join('; ');
  const desc = `${t('audit.chartSummary', { signIns, failures, from: label(data.from), to: label(data.to) })}${byChannel ? ` ${byChannel}.` : ''}${complete ? '' : ` ${t('audit.chartPartial')}`}`;

  const series = (kind: 'signIns' | 'failures', channel: string) => {
    const rects = data.buckets.map((b, i) => {
      const n = b[kind][channel] ?? 0;
      if (n === 0) return null;
      const below = data.channels.slice(0, data.channels.indexOf(channel)).reduce((s, c) => s + (b[kind][c] ?? 0), 0);
      const x = LEFT + i * slot + (slot - barW) / 2;
      const y = kind === 'signIns' ? base - (below + n) * scale : base + below * scale;
      return <rect key={b.start} x={x} y={y} width={barW} height={n * scale}><title>{`${label(b.start)}, ${channelName(channel)}: ${n}`}</title></rect>;
    });
    return <g key={`${kind}:${channel}`} data-series={`${kind === 'signIns' ? 'sign-ins' : 'failures'}:${channel}`} className={`${channelClass(channel)}${kind === 'failures' ? ' chart-failures' : ''}`}>{rects}</g>;
  };
  const ticks = [0, Math.floor(data.buckets.length / 2), data.buckets.length - 1].filter((v, i, a) => a.indexOf(v) === i);

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-title ${id}-desc`} className="chart-svg">
        <title id={`${id}-title`}>{t('audit.chartTitle')}</title>
        <desc id={`${id}-desc`}>{desc}</desc>
        {data.channels.map((c) => series('signIns', c))}
        {data.channels.map((c) => series('failures', c))}
        <line x1={LEFT} x2={W - RIGHT} y1={base} y2={base} className="chart-axis" />
        <line x1={LEFT} x2={LEFT} y1={TOP} y2={H - BOTTOM} className="chart-axis" />
        <text x={LEFT - 6} y={TOP + 4} textAnchor="end" className="chart-label">{up}</text>
        <text x={LEFT - 6} y={H - BOTTOM} textAnchor="end" className="chart-label">{down}</text>
        <text x={LEFT + 6} y={TOP + 10} className="chart-label">{`↑ ${t('audit.signIns')}`}</text>
        <text x={LEFT + 6} y={H - BOTTOM - 4} className="chart-label">{`↓ ${t('audit.failures')}`}</text>
        {ticks.map((i, n) => <text key={i} x={LEFT + i * slot + (n === 0 ? 0 : n === ticks.length - 1 ? slot : slot / 2)} y={H - 8} textAnchor={n === 0 ? 'start' : n === ticks.length - 1 ? 'end' : 'middle'} className="chart-label">{label(data.buckets[i]!.start)}</text>)}
      </svg>
      <figcaption>
        <ul className="legend">
          {data.channels.map((c) => <li key={c}><span className={`swatch ${channelClass(c)}`} aria-hidden="true" />{channelName(c)}</li>)}
        </ul>
        <p className="description">{desc}</p>
      </figcaption>
      <details className="chart-table">
        <summary>{t('audit.chartAsTable')}</summary>
        <table className="table">
          <caption>{t('audit.chartTitle')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('audit.time')}</th>
              {data.channels.map((c) => <th key={`s${c}`} scope="col">{t('audit.signInsOn', { channel: channelName(c) })}</th>)}
              {data.channels.map((c) => <th key={`f${c}`} scope="col">{t('audit.failuresOn', { channel: channelName(c) })}</th>)}
            </tr>
          </thead>
          <tbody>
            {data.buckets.filter((b) => total(b.signIns) + total(b.failures) > 0).map((b) => (
              <tr key={b.start}>
                <th scope="row">{label(b.start)}</th>
                {data.channels.map((c) => <td key={`s${c}`}>{b.signIns[c] ?? 0}</td>)}
                {data.channels.map((c) => <td key={`f${c}`}>{b.failures[c] ?? 0}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
