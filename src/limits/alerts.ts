/**
 * Alerts: a group whose usage crossed its policy's `alert_threshold` in this period (the counters
 * say so once per period, when a settle crosses it) is counted, logged, and POSTed to the alert
 * webhook, if any, through the host-guarded client. The webhook's answer is only logged.
 */
import type { CheckHttp } from '../checks/http.js';
import type { Telemetry } from '../metrics/telemetry.js';
import { fromUnits, type UsageAlert } from '../state/usage-counters.js';
import type { Held, KeyScope, UsageLimitsLogger } from './types.js';

export interface AlertWebhook {
  url: string;
  http: CheckHttp;
  timeoutMs: number;
}

export interface AlertsDeps {
  telemetry: Telemetry;
  logger: UsageLimitsLogger;
  /** Where alerts are POSTed (through the host-guarded client), if anywhere. */
  webhook?: AlertWebhook;
}

export class Alerts {
  constructor(private readonly deps: AlertsDeps) {}

  /** The settle's alerts: `item` indexes the request's held policies; `key` names the key in the log line. */
  raise(alerts: readonly UsageAlert[], held: readonly Held[], key: KeyScope | undefined): void {
    for (const a of alerts) {
      const p = held[a.item]!.policy.policy;
      const event = {
        policy_id: p.id,
        policy_name: p.name,
        workspace_id: p.workspace_id,
        organisation_id: p.organisation_id,
        type: p.type,
        group: a.group,
        used: fromUnits(p.type, a.used),
        alert_threshold: p.alert_threshold,
        credit_limit: p.credit_limit,
        period: a.period.key,
        resets_at: Number.isFinite(a.period.end) ? new Date(a.period.end).toISOString() : null,
      };
      this.deps.telemetry.limitAlert(p.id);
      this.deps.logger.warn({ msg: 'usage limit alert', ...event, key_name: key?.name });
      if (this.deps.webhook) this.post(this.deps.webhook, event);
    }
  }

  private post(hook: AlertWebhook, event: { policy_id: string }): void {
    const logger = this.deps.logger;
    hook.http
      .request(hook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'usage_limit.alert', ...event }),
        timeoutMs: hook.timeoutMs,
      })
      .then(
        (res) => {
          if (res.status >= 300) logger.warn({ msg: 'usage limit alert webhook answered an error', policy_id: event.policy_id, status: res.status });
        },
        (e: unknown) => logger.warn({ msg: 'usage limit alert webhook failed', policy_id: event.policy_id, error: (e as Error).message }),
      );
  }
}
