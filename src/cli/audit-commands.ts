/** What `strongroom audit ...` does (the rest of the CLI: commands.ts). Output for people, on stdout. */
import { sql } from 'kysely';
import type { Registry } from '../app.js';
import { listAuditPartitions } from '../audit/partitions.js';
import type { AuditCommand } from './audit-args.js';
import { table } from './roles-commands.js';
import { CommandFailed, type Print } from './usage.js';

const day = (iso: string | null) => (iso === null ? '(the beginning)' : iso.slice(0, 10));

async function partitions(s: Registry, print: Print): Promise<void> {
  const rows = [];
  for (const p of await listAuditPartitions(s.db)) {
    const { rows: counted } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(p.name)}`.execute(s.db);
    rows.push([p.name, day(p.from?.toISOString() ?? null), day(p.to.toISOString()), String(counted[0]?.n ?? 0)]);
  }
  table(print, [['PARTITION', 'FROM', 'UNTIL', 'ENTRIES'], ...rows]);
  print();
  print(`Entries are kept at least ${s.config.retention.auditMonths} months (AUDIT_RETENTION_MONTHS): months before ${day(s.auditRetention.cutoff().toISOString())} are dropped, except under a legal hold.`);
}

export async function runAudit(s: Registry, cmd: AuditCommand, print: Print, operator: string): Promise<void> {
  const retention = s.auditRetention;
  switch (cmd.name) {
    case 'audit partitions':
      return partitions(s, print);
    case 'audit prune': {
      const months = await retention.prune({ dryRun: cmd.dryRun });
      if (months.length === 0) return print(`No month is past the retention period (${s.config.retention.auditMonths} months) outside a legal hold.`);
      for (const m of months) {
        print(cmd.dryRun
          ? `Would drop ${m.partition} (${day(m.from)} to ${day(m.to)}).`
          : `Dropped ${m.partition} (${day(m.from)} to ${day(m.to)}): ${m.entries} entries${m.kept_under_hold > 0 ? `, ${m.kept_under_hold} of them kept under a legal hold` : ''}.`);
      }
      return;
    }
    case 'audit holds': {
      const holds = await retention.holdsInForce();
      if (holds.length === 0) return print('No legal hold is in force.');
      table(print, [['ID', 'FROM', 'TO', 'USER', 'PLACED BY', 'REASON'], ...holds.map((h) => [h.id, h.period_from, h.period_to, h.user_id ?? '(everyone)', h.created_by, h.reason])]);
      return;
    }
    case 'audit hold': {
      const h = await retention.placeHold({ reason: cmd.reason, from: cmd.from, to: cmd.to, userId: cmd.userId, by: operator });
      print(`Placed legal hold ${h.id}: ${h.user_id === null ? 'every audit entry' : `the audit entries of user ${h.user_id}`} from ${h.period_from} to ${h.period_to} will be kept until it is released (strongroom audit release ${h.id}).`);
      return;
    }
    case 'audit release': {
      const h = await retention.releaseHold(cmd.holdId, operator);
      if (!h) throw new CommandFailed(`No legal hold in force has the id ${cmd.holdId} (strongroom audit holds lists them).`);
      print(`Released legal hold ${h.id}: its entries follow the retention period again.`);
      return;
    }
  }
}
