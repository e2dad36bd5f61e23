/**
 * Access policies (permission policies.manage): who may use each channel (GET/PUT
 * /api/v1/admin/channels) and the policies of each channel, grouped by the role they narrow to
 * (GET /api/v1/admin/access-policies); a policy opens in its editor.
 */
import { Heading, Link } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { ErrorNotice } from '../../ui/forms.js';
import { ChannelRoles } from './ChannelRoles.js';
import { POLICY_CHANNELS, type ChannelAccess, type Policy, type PolicyChannel } from './types.js';

/** The channel's policies by role: the channel-wide ones (no role) first. */
function byRole(policies: readonly Policy[]): Array<[string | null, Policy[]]> {
  const groups = new Map<string | null, Policy[]>();
  for (const p of [...policies].sort((a, b) => (a.role ?? '').localeCompare(b.role ?? '') || a.name.localeCompare(b.name))) groups.set(p.role, [...(groups.get(p.role) ?? []), p]);
  return [...groups];
}

function ChannelSection({ channel, policies, access, onSaved }: { channel: PolicyChannel; policies: Policy[]; access?: ChannelAccess; onSaved(): void }) {
  const { t } = useI18n();
  const href = useHref();
  return (
    <section className="card policy-channel" aria-labelledby={`policies-${channel}`}>
      <Heading level={2} id={`policies-${channel}`}>{t('policies.channel', { channel })}</Heading>
      {access ? <ChannelRoles access={access} onSaved={onSaved} /> : null}
      {policies.length === 0 ? <p>{t('policies.noneOnChannel')}</p> : byRole(policies).map(([role, list]) => (
        <div key={role ?? ''} className="policy-group">
          <Heading level={3}>{role === null ? t('policies.everyone') : t('policies.forRole', { role })}</Heading>
          <ul className="policy-list">
            {list.map((p) => (
              <li key={p.id}>
                <Link href={href('policies', p.id)}>{p.name}</Link>
                {' '}<span className={`badge ${p.enabled ? 'badge-active' : 'badge-disabled'}`}>{p.enabled ? t('policies.enabled') : t('policies.disabled')}</span>
                {' '}<span className="description">{ruleSummary(p, t)}</span>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}

function ruleSummary(p: Policy, t: ReturnType<typeof useI18n>['t']): string {
  const parts: string[] = [];
  if (p.rules.allow_channel === false) parts.push(t('policies.summary.closed'));
  if (p.rules.ip) parts.push(t('policies.summary.ip'));
  if (p.rules.schedule) parts.push(t('policies.summary.schedule', { zone: p.rules.schedule[0]?.time_zone ?? '' }));
  if (p.rules.geofences) parts.push(t('policies.summary.geofences', { count: p.rules.geofences.length }));
  if (p.rules.require_bound_device) parts.push(t('policies.summary.device'));
  return parts.join(' · ');
}

export function PoliciesScreen() {
  const { t } = useI18n();
  const href = useHref();
  const policies = useApi<{ policies: Policy[] }>('/api/v1/admin/access-policies');
  const channels = useApi<{ channels: ChannelAccess[] }>('/api/v1/admin/channels');
  return (
    <>
      <div className="screen-head">
        <Heading level={1}>{t('policies.nav.policies')}</Heading>
        <p className="actions">
          <Link className="button button-primary" href={href('policies', 'new')}>{t('policies.new')}</Link>
          <Link className="button button-secondary" href={href('policies', 'tester')}>{t('policies.nav.tester')}</Link>
        </p>
      </div>
      <p>{t('policies.intro')}</p>
      <ErrorNotice error={policies.error ?? channels.error} />
      {policies.data ? POLICY_CHANNELS.map((c) => (
        <ChannelSection key={c} channel={c} policies={policies.data!.policies.filter((p) => p.channel === c)} access={channels.data?.channels.find((a) => a.channel === c)} onSaved={channels.reload} />
      )) : <p>{t('common.loading')}</p>}
    </>
  );
}
