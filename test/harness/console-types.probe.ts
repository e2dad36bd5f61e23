/** A console type drifted from GET /api/v1/admin/audit on purpose: test/api/console-types.test.ts checks that each drift is named. */
interface Entry {
  audit_id: string;
  location: { country?: string; planet?: string } | null;
}

export interface Drifted {
  entries: Entry[];
  total: string;
  total_exact: boolean;
  secret?: string;
}
