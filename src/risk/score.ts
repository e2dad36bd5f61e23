/**
 * The risk score of a sign-in: the sum of the raised signals' weights (RISK_WEIGHTS), capped at
 * 100. A sum rather than a model: an operator, an auditor and the customer's complaint can each
 * be answered with the list of indicators and their weights, which the audit entry carries.
 */
import type { GeoLocation } from '../geo/types.js';
import type { RiskAssessment, RiskIndicator } from './types.js';

export const MAX_RISK_SCORE = 100;

export function riskScore(indicators: readonly Pick<RiskIndicator, 'weight'>[]): number {
  return Math.min(MAX_RISK_SCORE, indicators.reduce((sum, i) => sum + i.weight, 0));
}

export function assessment(indicators: RiskIndicator[], location: GeoLocation | null): RiskAssessment {
  return { score: riskScore(indicators), indicators, location };
}
