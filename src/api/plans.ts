/**
 * Requests per minute for a plan; 0 is unlimited. An organization whose plan an operator has since
 * removed from PLANS gets the free plan's limit rather than none.
 */
export function rateLimitOf(plans: Readonly<Record<string, number>>, plan: string): number {
  return Object.hasOwn(plans, plan) ? plans[plan]! : plans.free!;
}
