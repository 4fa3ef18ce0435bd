import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { MailboxRow, MessageRow } from '../db/repositories/mail';
import { mailTaskQueue } from '../jobs/queues';
import type { Config } from '../lib/config';
import { AppError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import type { Temporal } from '../lib/temporal';
import { mailSyncScheduleId, sendMailMessage, snoozeMailMessage, syncMailbox } from '../workflows/mail';
import { ClientIdKey } from '../workflows/search-attributes';
import { QUEUE_UNAVAILABLE } from './job-service';
import { TemporalCalls } from './temporal-calls';

// A message's SMTP attempts (MAIL_SEND_MAX_ATTEMPTS, backoff up to 10 min) end well within this.
const SEND_DEADLINE = '1d';
// One sync run: the activity's 10 minutes and its retries.
const SYNC_DEADLINE = '30m';
// After the snooze ends: time for the one update that moves the message back.
const SNOOZE_GRACE_MS = 60 * 60 * 1000;

/**
 * The mail workflows the API starts (workflows/mail.ts), all on the mail task queue: one send per
 * message, a sync schedule per mailbox with IMAP, one snooze timer per message. Ids carry the
 * client id (row ids are per database, and test runs share one Temporal).
 */
export class MailWorkflows {
  private readonly calls: TemporalCalls;
  private readonly taskQueue: string;

  constructor(
    private readonly temporal: Temporal,
    private readonly config: Pick<
      Config,
      'TASK_QUEUE_PREFIX' | 'MAIL_SEND_MAX_ATTEMPTS' | 'MAIL_SYNC_INTERVAL_SECONDS'
    >,
    private readonly log: Logger,
  ) {
    this.calls = new TemporalCalls(temporal);
    this.taskQueue = mailTaskQueue(config.TASK_QUEUE_PREFIX);
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await this.calls.run(fn);
    } catch (err) {
      this.log.warn({ err: String(err) }, `${what} failed`);
      throw new AppError(503, QUEUE_UNAVAILABLE, 'unavailable');
    }
  }

  /** Starts `mail-send/<client>/<id>`; a second start of the same message is a no-op. */
  async startSend(m: MessageRow): Promise<void> {
    await this.call('mail send start', () =>
      this.temporal.client.workflow.start(sendMailMessage, {
        taskQueue: this.taskQueue,
        workflowId: `mail-send/${m.client_id}/${m.id}`,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        args: [{ clientId: m.client_id, messageId: m.id, maxAttempts: this.config.MAIL_SEND_MAX_ATTEMPTS }],
        workflowExecutionTimeout: SEND_DEADLINE,
        typedSearchAttributes: [{ key: ClientIdKey, value: m.client_id }],
        staticSummary: `send mail ${m.id} from mailbox ${m.mailbox_id} to ${m.to_addresses.length + (m.cc_addresses?.length ?? 0)} recipients`,
      }),
    );
  }

  private scheduleId = (mb: Pick<MailboxRow, 'client_id' | 'id'>) => mailSyncScheduleId(mb.client_id, mb.id);

  /** Creates the mailbox's sync schedule when it has IMAP, removes it when not. */
  async ensureSync(mb: MailboxRow): Promise<void> {
    if (!mb.imap_host) return this.removeSync(mb);
    await this.call('mail sync schedule', async () => {
      const handle = this.temporal.client.schedule.getHandle(this.scheduleId(mb));
      try {
        await handle.describe();
        return;
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
      await this.temporal.client.schedule.create({
        scheduleId: this.scheduleId(mb),
        spec: { intervals: [{ every: `${this.config.MAIL_SYNC_INTERVAL_SECONDS}s` }] },
        action: {
          type: 'startWorkflow',
          workflowType: syncMailbox,
          workflowId: this.scheduleId(mb),
          taskQueue: this.taskQueue,
          args: [{ clientId: mb.client_id, mailboxId: mb.id }],
          workflowExecutionTimeout: SYNC_DEADLINE,
          typedSearchAttributes: [{ key: ClientIdKey, value: mb.client_id }],
          staticSummary: `IMAP sync of mailbox ${mb.id} (${mb.address})`,
        },
        policies: { overlap: ScheduleOverlapPolicy.SKIP },
      });
    });
  }

  /** A sync now (after any running one). */
  async triggerSync(mb: MailboxRow): Promise<void> {
    await this.ensureSync(mb);
    await this.call('mail sync trigger', () =>
      this.temporal.client.schedule.getHandle(this.scheduleId(mb)).trigger(ScheduleOverlapPolicy.BUFFER_ONE),
    );
  }

  async removeSync(mb: Pick<MailboxRow, 'client_id' | 'id'>): Promise<void> {
    await this.call('mail sync schedule removal', async () => {
      try {
        await this.temporal.client.schedule.getHandle(this.scheduleId(mb)).delete();
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
    });
  }

  private snoozeId = (m: Pick<MessageRow, 'client_id' | 'id'>) => `mail-snooze/${m.client_id}/${m.id}`;

  /** Starts the message's timer, replacing an earlier one (a new snooze_until wins). */
  async startSnooze(m: Pick<MessageRow, 'client_id' | 'id'>, until: Date): Promise<void> {
    await this.call('mail snooze start', () =>
      this.temporal.client.workflow.start(snoozeMailMessage, {
        taskQueue: this.taskQueue,
        workflowId: this.snoozeId(m),
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.TERMINATE_EXISTING,
        args: [{ clientId: m.client_id, messageId: m.id, until: until.toISOString() }],
        workflowExecutionTimeout: `${Math.max(0, until.getTime() - Date.now()) + SNOOZE_GRACE_MS}ms`,
        typedSearchAttributes: [{ key: ClientIdKey, value: m.client_id }],
        staticSummary: `mail ${m.id} snoozed until ${until.toISOString()}`,
      }),
    );
  }

  /** Cancels the message's timer, if one runs. */
  async cancelSnooze(m: Pick<MessageRow, 'client_id' | 'id'>): Promise<void> {
    await this.call('mail snooze cancel', async () => {
      try {
        await this.temporal.client.workflow.getHandle(this.snoozeId(m)).cancel();
      } catch (err) {
        // No timer, or it already ended: nothing to cancel.
        if (!(err instanceof WorkflowNotFoundError) && !/already completed/i.test(String(err))) throw err;
      }
    });
  }

  drain(): Promise<void> {
    return this.calls.drain();
  }
}
