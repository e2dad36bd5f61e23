/**
 * `2026-03-06 09:30`: an instant as a notice shows it, to the minute, in UTC. The notice says
 * "(UTC)" beside it: the service does not know the reader's time zone, and a stated UTC time is
 * better than a silently wrong local one.
 */
export function utcMinute(at: Date): string {
  return at.toISOString().slice(0, 16).replace('T', ' ');
}
