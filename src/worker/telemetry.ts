/**
 * Tracing and metrics, off unless asked for (ARCHITECTURE.md#observability).
 *
 * Tracing runs through Temporal's OpenTelemetry interceptors: the client's span for starting a
 * session, the workflow's spans, and one span per activity, linked across processes through
 * Temporal headers. Inside the activity span we add our own: `model.call` (model, tokens, cost)
 * and `tool.call` (tool name, error, exit code). Configured by the standard variables:
 * `OTEL_TRACES_EXPORTER` (`otlp` or `console`; `none` or unset with no OTLP endpoint = off),
 * `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (read by the exporter),
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`.
 */
import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResourcesSync, envDetectorSync, Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, BasicTracerProvider, ConsoleSpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, InjectedSinks, Next } from '@temporalio/worker';
import type { ActivityExecuteInput } from '@temporalio/worker';
import type { Context as ActivityContext } from '@temporalio/activity';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { CompletedThroughClient } from '../activities/model/abandoned';
import type { CallModelInput } from '../shared/activities';
import type { AssistantReply } from '../shared/messages';
import type { RunToolInput, ToolOutcome } from '../shared/tools';

export interface TelemetryOptions {
  /** Where finished spans go (tests: a SimpleSpanProcessor over an InMemorySpanExporter). */
  spanProcessor: SpanProcessor;
  resource?: Resource;
}

const TRACER_NAME = 'durable-agent';

export type TracesExporter = 'otlp' | 'console';

/** The exporter the OTEL_* variables ask for, or undefined (off). An unknown exporter name is refused. */
export function tracesExporterFromEnv(env: Record<string, string | undefined>): TracesExporter | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? (endpoint ? 'otlp' : 'none')).trim();
  if (exporter === 'none' || exporter === '') return undefined;
  if (exporter !== 'otlp' && exporter !== 'console') {
    throw new Error(`OTEL_TRACES_EXPORTER: unsupported exporter '${exporter}' (supported: otlp, console, none)`);
  }
  return exporter;
}

/** Tracing through that exporter (the OTLP exporter reads its OTEL_EXPORTER_OTLP_* variables itself), or undefined (off). */
export function telemetryFor(exporter: TracesExporter | undefined): TelemetryOptions | undefined {
  if (!exporter) return undefined;
  const spanExporter = exporter === 'otlp' ? new OTLPTraceExporter() : new ConsoleSpanExporter();
  return { spanProcessor: new BatchSpanProcessor(spanExporter) };
}

export interface Tracing {
  tracer: otel.Tracer;
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Flush and stop: call once the workers have stopped. */
  shutdown(): Promise<void>;
}

/**
 * Spans find their parent through the active context and cross processes through Temporal
 * headers: both need OpenTelemetry's globals, which stay no-ops until someone sets them. Set them
 * once, unless the application already has (then theirs are used).
 */
let globalsSet = false;
function ensureTracingGlobals(): void {
  if (globalsSet) return;
  globalsSet = true;
  otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/**
 * A tracer provider of our own (not the global one, so two workers in one process keep their exporters apart).
 * `otelServiceName`: the worker's OTEL_SERVICE_NAME (the resource detector reads it); unset, the service is `durable-agent-worker`.
 */
export function startTracing(opts: TelemetryOptions, otelServiceName?: string): Tracing {
  ensureTracingGlobals();
  const resource = (opts.resource ?? Resource.default()).merge(
    detectResourcesSync({ detectors: [envDetectorSync] }).merge(
      new Resource(otelServiceName ? {} : { 'service.name': 'durable-agent-worker' }),
    ),
  );
  const provider = new BasicTracerProvider({ resource, spanProcessors: [opts.spanProcessor] });
  return {
    tracer: provider.getTracer(TRACER_NAME),
    resource,
    spanProcessor: opts.spanProcessor,
    shutdown: () => provider.shutdown(),
  };
}

/** Options for the workflow worker: Temporal's workflow interceptors and the sink their spans leave by. */
export function workflowTracing(t: Tracing): { workflowModules: string[]; sinks: InjectedSinks<never> } {
  return {
    workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    sinks: { exporter: makeWorkflowExporter(t.spanProcessor, t.resource) } as InjectedSinks<never>,
  };
}

/** Interceptors for an activity worker: Temporal's activity span, and ours for model and tool calls inside it. */
export function activityTracing(t: Tracing): ActivityInterceptorsFactory[] {
  return [
    (ctx) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: t.tracer }),
      outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
    (ctx) => ({ inbound: new AgentSpans(ctx, t.tracer) }),
  ];
}

/** For a client that starts sessions: its span becomes the parent of the session's workflow spans. */
export function clientTracing(tracer?: otel.Tracer): WorkflowClientInterceptor[] {
  ensureTracingGlobals();
  return [new OpenTelemetryWorkflowClientInterceptor(tracer ? { tracer } : {})];
}

/** `model.call` and `tool.call` spans, with what an operator asks of a slow or costly turn. */
class AgentSpans implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly ctx: ActivityContext,
    private readonly tracer: otel.Tracer,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const type = this.ctx.info.activityType;
    if (type !== 'callModel' && type !== 'runTool') return next(input);
    const name = type === 'callModel' ? 'model.call' : 'tool.call';
    return this.tracer.startActiveSpan(name, async (span) => {
      span.setAttribute('temporal.activity.attempt', this.ctx.info.attempt);
      if (type === 'callModel') span.setAttribute('gen_ai.request.model', (input.args[0] as CallModelInput).model);
      else span.setAttribute('tool.name', (input.args[0] as RunToolInput).name);
      const record = (out: unknown) => {
        if (type === 'callModel') {
          const reply = out as AssistantReply;
          span.setAttributes({
            'gen_ai.response.model': reply.model,
            'gen_ai.usage.input_tokens': reply.usage.input_tokens,
            'gen_ai.usage.output_tokens': reply.usage.output_tokens,
            'gen_ai.usage.cache_read_input_tokens': reply.usage.cache_read_input_tokens,
            'agent.cost_usd': reply.costUsd,
            'agent.stop_reason': reply.stop_reason,
          });
        } else {
          const outcome = out as ToolOutcome;
          span.setAttribute('tool.is_error', outcome.isError);
          const exitCode = (outcome.structured as { exitCode?: unknown } | undefined)?.exitCode;
          if (typeof exitCode === 'number') span.setAttribute('tool.exit_code', exitCode);
        }
      };
      try {
        const out = await next(input);
        record(out);
        return out;
      } catch (err) {
        // A model call that completed itself through the client (ARCHITECTURE.md#abandoned-attempts) ended well.
        if (err instanceof CompletedThroughClient) {
          record(err.result);
          throw err;
        }
        span.recordException(err as Error);
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    });
  }
}
