/**
 * One count above the line and another below it, over time, stacked by channel: sign-ins and
 * failed sign-ins, or account locks and security alerts raised. An SVG drawn here (no chart
 * library), named by its <title> and summarised by its <desc>, with the same numbers as a table
 * for whoever would rather read them.
 */
import { useId } from 'react';
import { ARIA_LOCALES, useI18n, type Translate } from '../../lib/i18n.js';
import { total, type Bucket, type ChartData, type Kind } from './chart-data.js';

const W = 720;
const H = 260;
const LEFT = 48;
const RIGHT = 8;
const TOP = 16;
const BOTTOM = 28;
const DAY = 86_400_000;

/** What a chart shows: its two counts, their `data-series` names, and its words. */
export interface ChartKind {
  up: Kind;
  down: Kind;
  series: [string, string];
  text(t: Translate): { title: string; asTable: string; up: string; down: string; summary(up: number, down: number, from: string, to: string): string; channel(name: string, up: number, down: number): string; upOn(name: string): string; downOn(name: string): string };
}

export const SIGN_IN_CHART: ChartKind = {
  up: 'sign_ins', down: 'failed_sign_ins', series: ['sign-ins', 'failures'],
  text: (t) => ({
    title: t('audit.chartTitle'), asTable: t('audit.signInsAsTable'), up: t('audit.signIns'), down: t('audit.failures'),
    summary: (signIns, failures, from, to) => t('audit.chartSummary', { signIns, failures, from, to }),
    channel: (channel, signIns, failures) => t('audit.chartChannel', { channel, signIns, failures }),
    upOn: (channel) => t('audit.signInsOn', { channel }), downOn: (channel) => t('audit.failuresOn', { channel }),
  }),
};

export const LOCK_CHART: ChartKind = {
  up: 'account_locks', down: 'alerts_raised', series: ['locks', 'alerts'],
  text: (t) => ({
    title: t('audit.locksTitle'), asTable: t('audit.locksAsTable'), up: t('audit.locks'), down: t('audit.alerts'),
    summary: (locks, alerts, from, to) => t('audit.locksSummary', { locks, alerts, from, to }),
    channel: (channel, locks, alerts) => t('audit.locksChannel', { channel, locks, alerts }),
    upOn: (channel) => t('audit.locksOn', { channel }), downOn: (channel) => t('audit.alertsOn', { channel }),
  }),
};

function channelClass(channel: string): string {
  return ['web', 'mobile', 'ussd', 'agent', 'none'].includes(channel) ? `chart-${channel}` : 'chart-other';
}

/** The words and the bucket labels of a chart (days in UTC, as the server counts them). */
function useChartWords(data: ChartData, kind: ChartKind) {
  const { t, language } = useI18n();
  const fmt = new Intl.DateTimeFormat(ARIA_LOCALES[language], data.unit >= DAY ? { dateStyle: 'medium', timeZone: 'UTC' } : { dateStyle: 'short', timeStyle: 'short' });
  const label = (at: number) => fmt.format(new Date(at));
  const channelName = (c: string) => (c === 'none' ? t('audit.noChannel') : c);
  const text = kind.text(t);
  const channels = data.channels.filter((c) => data.buckets.some((b) => (b.counts[kind.up][c] ?? 0) + (b.counts[kind.down][c] ?? 0) > 0));
  const sum = (k: Kind, c?: string) => data.buckets.reduce((n, b) => n + (c === undefined ? total(b.counts[k]) : (b.counts[k][c] ?? 0)), 0);
  const byChannel = channels.map((c) => text.channel(channelName(c), sum(kind.up, c), sum(kind.down, c))).join('; ');
  const desc = `${text.summary(sum(kind.up), sum(kind.down), label(data.from), label(data.to))}${byChannel ? ` ${byChannel}.` : ''}`;
  return { t, text, label, channelName, channels, desc };
}

export function TrendChart({ data, kind }: { data: ChartData; kind: ChartKind }) {
  const id = useId();
  const { t, text, label, channelName, channels, desc } = useChartWords(data, kind);
  const up = Math.max(1, ...data.buckets.map((b) => total(b.counts[kind.up])));
  const down = Math.max(1, ...data.buckets.map((b) => total(b.counts[kind.down])));
  const plot = H - TOP - BOTTOM;
  const base = TOP + (plot * up) / (up + down);
  const scale = plot / (up + down);
  const slot = (W - LEFT - RIGHT) / data.buckets.length;
  const barW = Math.max(1, slot * 0.7);

  const series = (k: Kind, channel: string) => {
    const isUp = k === kind.up;
    const rects = data.buckets.map((b, i) => {
      const n = b.counts[k][channel] ?? 0;
      if (n === 0) return null;
      const below = channels.slice(0, channels.indexOf(channel)).reduce((s, c) => s + (b.counts[k][c] ?? 0), 0);
      const y = isUp ? base - (below + n) * scale : base + below * scale;
      return <rect key={b.start} x={LEFT + i * slot + (slot - barW) / 2} y={y} width={barW} height={n * scale}><title>{`${label(b.start)}, ${channelName(channel)}: ${n}`}</title></rect>;
    });
    return <g key={`${k}:${channel}`} data-series={`${kind.series[isUp ? 0 : 1]}:${channel}`} className={`${channelClass(channel)}${isUp ? '' : ' chart-down'}`}>{rects}</g>;
  };
  const ticks = [0, Math.floor(data.buckets.length / 2), data.buckets.length - 1].filter((v, i, a) => a.indexOf(v) === i);

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-title ${id}-desc`} className="chart-svg">
        <title id={`${id}-title`}>{text.title}</title>
        <desc id={`${id}-desc`}>{desc}</desc>
        {channels.map((c) => series(kind.up, c))}
        {channels.map((c) => series(kind.down, c))}
        <line x1={LEFT} x2={W - RIGHT} y1={base} y2={base} className="chart-axis" />
        <line x1={LEFT} x2={LEFT} y1={TOP} y2={H - BOTTOM} className="chart-axis" />
        <text x={LEFT - 6} y={TOP + 4} textAnchor="end" className="chart-label">{up}</text>
        <text x={LEFT - 6} y={H - BOTTOM} textAnchor="end" className="chart-label">{down}</text>
        <text x={LEFT + 6} y={TOP + 10} className="chart-label">{`↑ ${text.up}`}</text>
        <text x={LEFT + 6} y={H - BOTTOM - 4} className="chart-label">{`↓ ${text.down}`}</text>
        {ticks.map((i, n) => <text key={i} x={LEFT + i * slot + (n === 0 ? 0 : n === ticks.length - 1 ? slot : slot / 2)} y={H - 8} textAnchor={n === 0 ? 'start' : n === ticks.length - 1 ? 'end' : 'middle'} className="chart-label">{label(data.buckets[i]!.start)}</text>)}
      </svg>
      <figcaption>
        <ul className="legend">
          {channels.map((c) => <li key={c}><span className={`swatch ${channelClass(c)}`} aria-hidden="true" />{channelName(c)}</li>)}
        </ul>
        <p className="description">{desc}</p>
      </figcaption>
      <details className="chart-table">
        <summary>{text.asTable}</summary>
        <ChartTable buckets={data.buckets} kind={kind} channels={channels} caption={text.title} time={t('audit.time')} label={label} head={(c, isUp) => (isUp ? text.upOn(channelName(c)) : text.downOn(channelName(c)))} />
      </details>
    </figure>
  );
}

function ChartTable({ buckets, kind, channels, caption, time, label, head }: { buckets: Bucket[]; kind: ChartKind; channels: string[]; caption: string; time: string; label(at: number): string; head(channel: string, up: boolean): string }) {
  const cells = (b: Bucket, k: Kind) => channels.map((c) => <td key={`${k}${c}`}>{b.counts[k][c] ?? 0}</td>);
  return (
    <table className="table">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{time}</th>
          {channels.map((c) => <th key={`u${c}`} scope="col">{head(c, true)}</th>)}
          {channels.map((c) => <th key={`d${c}`} scope="col">{head(c, false)}</th>)}
        </tr>
      </thead>
      <tbody>
        {buckets.filter((b) => total(b.counts[kind.up]) + total(b.counts[kind.down]) > 0).map((b) => (
          <tr key={b.start}>
            <th scope="row">{label(b.start)}</th>
            {cells(b, kind.up)}
            {cells(b, kind.down)}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
