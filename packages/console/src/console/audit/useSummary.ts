/** The charts' numbers for the filters' user, channel, country and range (the last day without one), counted by the server. */
import { useEffect, useState } from 'react';
import { useSession } from '../../lib/session.js';
import { chartData, summaryPath, type AuditSummary, type ChartData } from './chart-data.js';
import type { AuditFilters } from './types.js';

const DAY = 86_400_000;

export function useSummary(filters: AuditFilters): { data?: ChartData; error: unknown } {
  const { call } = useSession();
  const [state, setState] = useState<{ for: AuditFilters | null; data?: ChartData; error: unknown }>({ for: null, error: null });
  useEffect(() => {
    let live = true;
    // "The last day" is the last day as of when the filters were applied.
    const to = filters.to ? Date.parse(filters.to) : Date.now();
    const from = filters.from ? Date.parse(filters.from) : to - DAY;
    call<AuditSummary>('GET', summaryPath(filters, from, to)).then(
      (summary) => { if (live) setState({ for: filters, data: chartData(summary), error: null }); },
      (error: unknown) => { if (live) setState({ for: filters, error }); },
    );
    return () => { live = false; };
  }, [call, filters]);
  return state.for === filters ? state : { error: null };
}
