/**
 * Listing workflow runs through visibility without letting one unreadable run break the listing.
 *
 * The SDK's `workflow.list()` decodes every run's memo with the client's codecs and throws out of
 * the whole iteration when one memo cannot be decoded — a run written by a worker with an
 * encryption key this client does not hold (ARCHITECTURE.md#payload-codec) would make `ls`,
 * `continue` and batch results fail for every other session on the namespace. Here each memo
 * field is decoded on its own; one that cannot be read is left out of that run's `memo` and the
 * run is still listed (its search attributes are never encoded, so status, model, turns and
 * cost stay visible).
 */
import { type Client } from '@temporalio/client';
import { defaultPayloadConverter, type PayloadCodec, type SearchAttributes } from '@temporalio/common';
import { decodeSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import { decode } from '@temporalio/common/lib/internal-non-workflow/codec-helpers';
import { temporal } from '@temporalio/proto';

export interface ListedRun {
  workflowId: string;
  runId: string;
  /** As the SDK names it: RUNNING, COMPLETED, FAILED, CANCELED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT. */
  status: string;
  startTime: Date;
  closeTime?: Date;
  searchAttributes: SearchAttributes;
  /** The memo fields this client could decode; a field encoded with a key it lacks is absent. */
  memo: Record<string, unknown>;
  /** The workflow that started this one as its child (a subagent's session, a batch), when the server says. */
  parentWorkflowId?: string;
  /** The build of the worker deployment the run is on (ARCHITECTURE.md#deploys); absent when unversioned. */
  buildId?: string;
}

const STATUS_PREFIX = 'WORKFLOW_EXECUTION_STATUS_';

function statusName(code: temporal.api.enums.v1.WorkflowExecutionStatus | null | undefined): string {
  const name = temporal.api.enums.v1.WorkflowExecutionStatus[code ?? 0] ?? 'UNSPECIFIED';
  return name.startsWith(STATUS_PREFIX) ? name.slice(STATUS_PREFIX.length) : name;
}

function toDate(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): Date | undefined {
  if (!ts) return undefined;
  const seconds = Number(ts.seconds ?? 0);
  return new Date(seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));
}

async function lenientMemo(codecs: PayloadCodec[], fields: Record<string, temporal.api.common.v1.IPayload> | null | undefined) {
  const memo: Record<string, unknown> = {};
  for (const [key, payload] of Object.entries(fields ?? {})) {
    try {
      const [decoded] = await decode(codecs, [payload]);
      memo[key] = defaultPayloadConverter.fromPayload(decoded!);
    } catch {
      // Written with a codec or key this client does not have: the run is listed without it.
    }
  }
  return memo;
}

/** Runs matching a visibility query, page by page, in the server's order (newest first). */
export async function* listRuns(
  client: Client,
  query: string,
  opts: { codecs?: PayloadCodec[]; pageSize?: number } = {},
): AsyncGenerator<ListedRun> {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkflowExecutions({
      namespace: client.options.namespace,
      query,
      pageSize: opts.pageSize ?? 1000,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const raw of page.executions ?? []) {
      const closeTime = toDate(raw.closeTime);
      const parentWorkflowId = raw.parentExecution?.workflowId;
      yield {
        workflowId: raw.execution?.workflowId ?? '',
        runId: raw.execution?.runId ?? '',
        status: statusName(raw.status),
        startTime: toDate(raw.startTime) ?? new Date(0),
        ...(closeTime ? { closeTime } : {}),
        searchAttributes: decodeSearchAttributes(raw.searchAttributes?.indexedFields),
        memo: await lenientMemo(opts.codecs ?? [], raw.memo?.fields),
        ...(parentWorkflowId ? { parentWorkflowId } : {}),
        ...(buildOf(raw) ? { buildId: buildOf(raw) } : {}),
      };
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
}

/**
 * The build a session's run is on (ARCHITECTURE.md#deploys): its versioning info (describe), else
 * visibility's `TemporalWorkerDeploymentVersion` (a listing, which carries no versioning info);
 * undefined when unversioned.
 */
export function buildOf(raw: temporal.api.workflow.v1.IWorkflowExecutionInfo | null | undefined): string | undefined {
  const v = raw?.versioningInfo;
  const id = v?.deploymentVersion?.buildId;
  if (id) return id;
  const listed = decodeSearchAttributes(raw?.searchAttributes?.indexedFields)[DEPLOYMENT_VERSION_ATTRIBUTE]?.[0];
  // `<deployment>:<build>` (or `.` on servers before 1.28).
  const version = v?.version || (typeof listed === 'string' ? listed : '');
  return /^[^.:]+[.:](.+)$/.exec(version)?.[1];
}

/** Visibility's system attribute naming a run's deployment version. */
const DEPLOYMENT_VERSION_ATTRIBUTE = 'TemporalWorkerDeploymentVersion';
