/**
 * The risk response policy's administration (permission `policies.manage`, as the access
 * policies): read the policy in force, replace it, or go back to the operator's defaults. Every
 * change is audited (RISK_POLICY_UPDATED, with the policy before and after) and reaches every node
 * before the answer on this one.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../../audit/service.js';
import type { Db } from '../../platform/db/database.js';
import { CommonErrors } from '../../platform/errors.js';
import type { App } from '../../platform/http/app.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { requestWho, type Guard, type Who } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { policyProblems, type RiskPolicy } from './policy.js';
import { PolicyBody, PolicyView } from './schemas.js';
import type { PolicyInForce, RiskPolicyStore } from './store.js';

const tags = ['Risk responses'];
const security = [{ bearer: [] }];
export const RISK_POLICY_PERMISSION = 'policies.manage';
const PATH = '/api/v1/admin/risk/policy';
const DENIED = '`403 PERMISSION_DENIED`: the caller lacks `policies.manage`.';

export interface RiskPolicyRouteDeps {
  db: Db;
  store: RiskPolicyStore;
  audit: AuditLog;
  guard: Guard;
  users: UserStore;
}

function view(p: PolicyInForce) {
  return { ...p.policy, source: p.source, updated_at: p.updated_at?.toISOString() ?? null, updated_by: p.updated_by };
}

export function riskPolicyRoutes(deps: RiskPolicyRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const onRequest = deps.guard.requirePermission(RISK_POLICY_PERMISSION);

    /** Saves `next` (null: back to the defaults), audited with what it replaced, and tells every node. */
    const change = async (next: RiskPolicy | null, who: Who) => {
      await deps.db.transaction().execute(async (trx) => {
        const before = await deps.store.lockCurrent(trx);
        if (next === null) await deps.store.clear(trx);
        else await deps.store.save(trx, next, who.actor.uuid);
        await deps.audit.record({
          ...who.context, eventType: 'RISK_POLICY_UPDATED', status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username,
          details: { before, after: next, reset_to_defaults: next === null },
        }, trx);
      });
      await deps.store.announce();
      return view(await deps.store.current());
    };

    app.get(PATH, {
      schema: {
        tags, security, summary: 'The risk response policy in force (permission policies.manage)',
        description: `What a sign-in does about its risk score and signals, by rule and channel: ask for a second factor, refuse, lock the account, or block the client's network. \`source\` says whether an administrator saved it or it is the operator's defaults.\n\n${bullets(DENIED)}`,
        response: { 200: PolicyView },
      },
      onRequest,
    }, async () => view(await deps.store.current()));

    app.put(PATH, {
      schema: {
        tags, security, summary: 'Replace the risk response policy (permission policies.manage)',
        description: `The whole policy is replaced and applies to the next sign-in on every node. Audited (\`RISK_POLICY_UPDATED\`, with the policy before and after). Saving ends no address block already in force.\n\n${bullets(DENIED, '`422 VALIDATION_ERROR`: the body does not match the schema, or a rule has neither `min_score` nor `signals` (it would never apply).')}`,
        body: PolicyBody,
        response: { 200: PolicyView, ...errors(CommonErrors.VALIDATION_ERROR) },
      },
      onRequest,
    }, async (request) => {
      const policy: RiskPolicy = request.body;
      const problems = policyProblems(policy);
      if (problems.length > 0) throw CommonErrors.VALIDATION_ERROR({ fields: problems.map((p) => ({ location: 'body', ...p })) });
      return change(policy, await requestWho(request, deps.users));
    });

    app.delete(PATH, {
      schema: {
        tags, security, summary: 'Go back to the operator\'s default risk response policy (permission policies.manage)',
        description: `Removes the saved policy: the defaults of RISK_STEP_UP_SCORE, RISK_REFUSE_SCORE, RISK_ADDRESS_BLOCK_MINUTES and RISK_ACCOUNT_LOCK_MINUTES apply again. Audited (\`RISK_POLICY_UPDATED\`, \`reset_to_defaults\`).\n\n${bullets(DENIED)}`,
        response: { 200: PolicyView },
      },
      onRequest,
    }, async (request) => change(null, await requestWho(request, deps.users)));
  };
}

