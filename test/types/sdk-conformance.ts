/**
 * Type-level conformance with the Claude Agent SDK, checked by the compiler against the SDK's own
 * `.d.ts`. `npm run typecheck` compiles this file against the pinned SDK;
 * test/types/sdk-conformance.test.ts compiles it on its own against each SDK version installed
 * (the pinned one and the `claude-agent-sdk-newest` alias: test/types/compile-conformance.ts) and
 * shows that a broken field fails it; `npx tsx scripts/bump-sdk-newest.ts` moves the alias to the
 * newest SDK and runs it. Nothing here runs.
 *
 * `Conforms<Ours, Theirs>` fails to compile ("does not satisfy the constraint") when a value of our
 * type could not be used where the SDK's type is expected.
 */
import type * as SDK from '@anthropic-ai/claude-agent-sdk';
import type * as Ours from '../../src/index';
import type { SessionEvent } from '../../src/shared/events';
import type { OPTION_SUPPORT } from '../../src/sdk/option-support';
import type { QUERY_METHOD_SUPPORT } from '../../src/sdk/query-method-support';

type Conforms<T extends U, U> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const holds = <T extends true>(): T => true as T;
/** Ours is assignable to theirs and has each of its keys, so SDK code reading any field compiles. */
type Mirrors<T extends U, U> = Same<keyof T, keyof U>;
/** A message's `type/subtype` (`-` for none); one string per subtype of a union of them. */
type Tag<M> = M extends { type: infer T extends string } ? `${T}/${M extends { subtype: infer S extends string } ? S : '-'}` : never;

// What the stream sends: the SDK's messages we send and our own events (`stream_event`s come from
// the live channel, never from the event log)…
holds<Same<SessionEvent | Ours.SDKPartialAssistantMessage, Ours.SentSDKMessage | Ours.DurableAgentEvent>>();
holds<Same<Ours.QueryMessage, Ours.SDKMessage | Ours.DurableAgentEvent>>();

// …our SDKMessage has every `type`/`subtype` the SDK's has, and no other…
holds<Same<Tag<Ours.SDKMessage>, Tag<SDK.SDKMessage>>>();

// …each member of it is assignable to its own variant of the SDK's union: those we send…
type Sent =
  | Conforms<Ours.SDKSystemMessage, SDK.SDKSystemMessage>
  | Conforms<Ours.SDKAssistantMessage, SDK.SDKAssistantMessage>
  | Conforms<Ours.UserMessage, SDK.SDKUserMessage>
  | Conforms<Ours.SDKToolProgressMessage, SDK.SDKToolProgressMessage>
  | Conforms<Ours.SDKAPIRetryMessage, SDK.SDKAPIRetryMessage>
  | Conforms<Ours.SDKPermissionDeniedMessage, SDK.SDKPermissionDeniedMessage>
  | Conforms<Ours.SDKCompactBoundaryMessage, SDK.SDKCompactBoundaryMessage>
  | Conforms<Ours.SDKHookResponseMessage, SDK.SDKHookResponseMessage>
  | Conforms<Ours.SDKPartialAssistantMessage, SDK.SDKPartialAssistantMessage>
  | Conforms<Ours.SDKResultSuccess, SDK.SDKResultSuccess>
  | Conforms<Ours.SDKResultError, SDK.SDKResultError>;
holds<Same<Exclude<Ours.SentSDKMessage, Sent>, never>>();

// …and those we never send, each with all of the SDK's fields.
holds<Mirrors<Ours.SDKUserMessageReplay, SDK.SDKUserMessageReplay>>();
holds<Mirrors<Ours.SDKStatusMessage, SDK.SDKStatusMessage>>();
holds<Mirrors<Ours.SDKControlRequestProgressMessage, SDK.SDKControlRequestProgressMessage>>();
holds<Mirrors<Ours.SDKModelRefusalFallbackMessage, SDK.SDKModelRefusalFallbackMessage>>();
holds<Mirrors<Ours.SDKModelRefusalNoFallbackMessage, SDK.SDKModelRefusalNoFallbackMessage>>();
holds<Mirrors<Ours.SDKLocalCommandOutputMessage, SDK.SDKLocalCommandOutputMessage>>();
holds<Mirrors<Ours.SDKHookStartedMessage, SDK.SDKHookStartedMessage>>();
holds<Mirrors<Ours.SDKHookProgressMessage, SDK.SDKHookProgressMessage>>();
holds<Mirrors<Ours.SDKPluginInstallMessage, SDK.SDKPluginInstallMessage>>();
holds<Mirrors<Ours.SDKAuthStatusMessage, SDK.SDKAuthStatusMessage>>();
holds<Mirrors<Ours.SDKTaskNotificationMessage, SDK.SDKTaskNotificationMessage>>();
holds<Mirrors<Ours.SDKTaskStartedMessage, SDK.SDKTaskStartedMessage>>();
holds<Mirrors<Ours.SDKTaskUpdatedMessage, SDK.SDKTaskUpdatedMessage>>();
holds<Mirrors<Ours.SDKTaskProgressMessage, SDK.SDKTaskProgressMessage>>();
holds<Mirrors<Ours.SDKBackgroundTasksChangedMessage, SDK.SDKBackgroundTasksChangedMessage>>();
holds<Mirrors<Ours.SDKThinkingTokensMessage, SDK.SDKThinkingTokensMessage>>();
holds<Mirrors<Ours.SDKSessionStateChangedMessage, SDK.SDKSessionStateChangedMessage>>();
holds<Mirrors<Ours.SDKWorkerShuttingDownMessage, SDK.SDKWorkerShuttingDownMessage>>();
holds<Mirrors<Ours.SDKCommandsChangedMessage, SDK.SDKCommandsChangedMessage>>();
holds<Mirrors<Ours.SDKNotificationMessage, SDK.SDKNotificationMessage>>();
holds<Mirrors<Ours.SDKFilesPersistedEvent, SDK.SDKFilesPersistedEvent>>();
holds<Mirrors<Ours.SDKToolUseSummaryMessage, SDK.SDKToolUseSummaryMessage>>();
holds<Mirrors<Ours.SDKMemoryRecallMessage, SDK.SDKMemoryRecallMessage>>();
holds<Mirrors<Ours.SDKRateLimitEvent, SDK.SDKRateLimitEvent>>();
holds<Mirrors<Ours.SDKElicitationCompleteMessage, SDK.SDKElicitationCompleteMessage>>();
holds<Mirrors<Ours.SDKPromptSuggestionMessage, SDK.SDKPromptSuggestionMessage>>();
holds<Mirrors<Ours.SDKMirrorErrorMessage, SDK.SDKMirrorErrorMessage>>();
holds<Mirrors<Ours.SDKInformationalMessage, SDK.SDKInformationalMessage>>();
holds<Mirrors<Ours.SDKConversationResetMessage, SDK.SDKConversationResetMessage>>();
holds<Mirrors<Ours.SDKSessionWritesLostMessage, SDK.SDKSessionWritesLostMessage>>();
holds<Mirrors<Ours.SDKRateLimitInfo, SDK.SDKRateLimitInfo>>();
holds<Mirrors<Ours.SlashCommand, SDK.SlashCommand>>();
holds<Mirrors<Ours.SDKMcpResourceLink, SDK.SDKMcpResourceLink>>();
export type OriginConforms = Conforms<Ours.SDKMessageOrigin, SDK.SDKMessageOrigin>;
// (The list above is the whole of NeverSentSDKMessage: a member left out is a compile error here.)
type Listed =
  | Ours.SDKUserMessageReplay
  | Ours.SDKStatusMessage
  | Ours.SDKControlRequestProgressMessage
  | Ours.SDKModelRefusalFallbackMessage
  | Ours.SDKModelRefusalNoFallbackMessage
  | Ours.SDKLocalCommandOutputMessage
  | Ours.SDKHookStartedMessage
  | Ours.SDKHookProgressMessage
  | Ours.SDKPluginInstallMessage
  | Ours.SDKAuthStatusMessage
  | Ours.SDKTaskNotificationMessage
  | Ours.SDKTaskStartedMessage
  | Ours.SDKTaskUpdatedMessage
  | Ours.SDKTaskProgressMessage
  | Ours.SDKBackgroundTasksChangedMessage
  | Ours.SDKThinkingTokensMessage
  | Ours.SDKSessionStateChangedMessage
  | Ours.SDKWorkerShuttingDownMessage
  | Ours.SDKCommandsChangedMessage
  | Ours.SDKNotificationMessage
  | Ours.SDKFilesPersistedEvent
  | Ours.SDKToolUseSummaryMessage
  | Ours.SDKMemoryRecallMessage
  | Ours.SDKRateLimitEvent
  | Ours.SDKElicitationCompleteMessage
  | Ours.SDKPromptSuggestionMessage
  | Ours.SDKMirrorErrorMessage
  | Ours.SDKInformationalMessage
  | Ours.SDKConversationResetMessage
  | Ours.SDKSessionWritesLostMessage;
holds<Same<Ours.NeverSentSDKMessage, Listed>>();

// So the union as a whole, and the exported names, are the SDK's.
export type StreamConforms = Conforms<Ours.SDKMessage, SDK.SDKMessage>;
export type ResultConforms = Conforms<Ours.SDKResultMessage, SDK.SDKResultMessage>;
holds<Same<Tag<Ours.SDKResultMessage>, Tag<SDK.SDKResultMessage>>>();
holds<Same<Ours.UUID, SDK.SDKAssistantMessage['uuid']>>();

// Our own events never pass for an SDK message: no SDK variant shares their subtypes (so
// `isDurableAgentEvent` cannot misfile an SDK message), and none of them is assignable to the union.
holds<Same<Extract<SDK.SDKMessage, { subtype: Ours.DurableAgentEvent['subtype'] }>, never>>();
holds<Same<Extract<Ours.DurableAgentEvent, SDK.SDKMessage>, never>>();

// Options: an SDK-typed options object is accepted as it is; the support table names exactly the SDK's keys.
export type OptionsAccepted = Conforms<SDK.Options, Ours.Options>;
holds<Same<keyof typeof OPTION_SUPPORT, keyof SDK.Options>>();
holds<Same<Ours.PermissionMode, SDK.PermissionMode>>();
export type PermissionResultAccepted = Conforms<SDK.PermissionResult, Ours.PermissionResult>;
export type CanUseToolAccepted = Conforms<SDK.CanUseTool, Ours.CanUseTool>;
export type UserInputAccepted = Conforms<SDK.SDKUserMessage, Ours.SDKUserMessage>;
// Callback hooks: the SDK's matchers are accepted, and the input we give a callback is one the SDK's callbacks take.
export type HookMatcherAccepted = Conforms<SDK.HookCallbackMatcher, Ours.QueryHookMatcher>;
export type HookInputConforms = Conforms<Ours.HookInput, SDK.HookInput>;

// Query: every method has the SDK's signature, so ours stands wherever the SDK's is expected once
// our own events are set aside: they are all that tells the two apart (README "Query methods").
type Generator = keyof AsyncGenerator<unknown>;
type Yields<Q> = Q extends AsyncGenerator<infer M, void> ? M : never;
holds<Same<Yields<Ours.Query>, Ours.QueryMessage>>();
export type QueryMethodsConform = Conforms<Omit<Ours.Query, Generator>, Omit<SDK.Query, Generator>>;
export type QueryConformsWithoutOurEvents = Conforms<
  Omit<Ours.Query, Generator> & AsyncGenerator<Exclude<Yields<Ours.Query>, Ours.DurableAgentEvent>, void>,
  SDK.Query
>;
holds<Same<Ours.Query extends SDK.Query ? true : false, false>>();
type Implemented =
  | 'interrupt'
  | 'setModel'
  | 'setPermissionMode'
  | 'setMaxThinkingTokens'
  | 'close'
  | 'supportedModels'
  | 'supportedCommands'
  | 'supportedAgents'
  | 'mcpServerStatus'
  | 'accountInfo'
  | 'initializationResult'
  | 'streamInput'
  | 'reloadSkills'
  | 'reloadOutputStyles'
  | 'reloadPlugins';
export type MethodsConform = Conforms<Pick<Ours.Query, Implemented>, Pick<SDK.Query, Implemented>>;
// setPermissionMode resolves to what both versions allow (0.3.330: void; 0.3.332: the mode in effect, or undefined).
export type SetPermissionModeResolves = Conforms<Awaited<ReturnType<Ours.Query['setPermissionMode']>>, undefined>;
type SdkQueryFunction = (params: { prompt: string | AsyncIterable<SDK.SDKUserMessage>; options?: SDK.Options }) => SDK.Query;
export type QueryParamsAccepted = Conforms<Parameters<SdkQueryFunction>[0], Parameters<typeof Ours.query>[0]>;
holds<Same<ReturnType<typeof Ours.query>, Ours.Query>>();
// The method table (README "Query methods") names exactly the SDK's methods, and says `supported` for those implemented.
holds<Same<keyof typeof QUERY_METHOD_SUPPORT, Exclude<keyof SDK.Query, keyof AsyncGenerator<SDK.SDKMessage, void>>>>();
type SupportedInTable = {
  [K in keyof typeof QUERY_METHOD_SUPPORT]: (typeof QUERY_METHOD_SUPPORT)[K]['status'] extends 'supported' ? K : never;
}[keyof typeof QUERY_METHOD_SUPPORT];
holds<Same<SupportedInTable, Implemented>>();
holds<Same<Ours.AgentInfo, SDK.AgentInfo>>();

declare const ourQuery: typeof Ours.query;
declare const isDurableAgentEvent: typeof Ours.isDurableAgentEvent;

// Code that narrows on every `type` and `subtype` the SDK declares, and reads what it finds,
// compiles against our query() un-annotated; our own events narrow the same way.
export async function narrowsOnEverySdkMessage(): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const m of ourQuery({ prompt: 'hi' })) {
    switch (m.type) {
      case 'assistant':
        seen.push(m.message.content, m.parent_tool_use_id);
        break;
      case 'user':
        seen.push('isReplay' in m ? m.isReplay : m.message.content);
        break;
      case 'result':
        if (m.subtype === 'success') seen.push(m.result);
        else if (m.subtype === 'error_max_structured_output_retries') seen.push(m.errors);
        else seen.push(m.subtype, m.errors);
        break;
      case 'stream_event':
        seen.push(m.event.type);
        break;
      case 'tool_progress':
        seen.push(m.elapsed_time_seconds);
        break;
      case 'auth_status':
        seen.push(m.isAuthenticating, m.output);
        break;
      case 'tool_use_summary':
        seen.push(m.summary, m.preceding_tool_use_ids);
        break;
      case 'rate_limit_event':
        seen.push(m.rate_limit_info.status, m.rate_limit_info.resetsAt);
        break;
      case 'prompt_suggestion':
        seen.push(m.suggestion);
        break;
      case 'conversation_reset':
        seen.push(m.new_conversation_id);
        break;
      case 'system':
        switch (m.subtype) {
          case 'init':
            seen.push(m.model, m.tools, m.apiKeySource);
            break;
          case 'compact_boundary':
            seen.push(m.compact_metadata.pre_tokens);
            break;
          case 'status':
            seen.push(m.status === 'compacting', m.permissionMode);
            break;
          case 'api_retry':
            seen.push(m.attempt, m.error);
            break;
          case 'control_request_progress':
            seen.push(m.request_id, m.status);
            break;
          case 'model_refusal_fallback':
            seen.push(m.fallback_model, m.direction);
            break;
          case 'model_refusal_no_fallback':
            seen.push(m.original_model);
            break;
          case 'local_command_output':
            seen.push(m.content);
            break;
          case 'hook_started':
            seen.push(m.hook_name);
            break;
          case 'hook_progress':
            seen.push(m.output);
            break;
          case 'hook_response':
            seen.push(m.outcome, m.exit_code);
            break;
          case 'plugin_install':
            seen.push(m.status, m.name);
            break;
          case 'task_notification':
            seen.push(m.status, m.summary, m.usage?.total_tokens);
            break;
          case 'task_started':
            seen.push(m.description);
            break;
          case 'task_updated':
            seen.push(m.patch.status);
            break;
          case 'task_progress':
            seen.push(m.usage.tool_uses);
            break;
          case 'background_tasks_changed':
            seen.push(m.tasks.length);
            break;
          case 'thinking_tokens':
            seen.push(m.estimated_tokens);
            break;
          case 'session_state_changed':
            seen.push(m.state === 'requires_action');
            break;
          case 'worker_shutting_down':
            seen.push(m.reason);
            break;
          case 'commands_changed':
            seen.push(m.commands.map((c) => c.name));
            break;
          case 'notification':
            seen.push(m.text, m.priority);
            break;
          case 'files_persisted':
            seen.push(m.files, m.failed);
            break;
          case 'memory_recall':
            seen.push(m.memories.map((x) => x.path));
            break;
          case 'elicitation_complete':
            seen.push(m.elicitation_id);
            break;
          case 'permission_denied':
            seen.push(m.tool_name, m.message);
            break;
          case 'mirror_error':
            seen.push(m.key.sessionId);
            break;
          case 'informational':
            seen.push(m.level, m.content);
            break;
          case 'session_writes_lost':
            seen.push(m.error_code, m.lost);
            break;
          // Ours.
          case 'permission_request':
            seen.push(m.request_id, m.tool_input);
            break;
          case 'permission_resolved':
            seen.push(m.behavior);
            break;
          case 'hook_request':
            seen.push(m.request_session_id, m.hook_input.hook_event_name);
            break;
          case 'tool_request':
            seen.push(m.request_session_id, m.tool_name, m.tool_input);
            break;
          case 'model_changed':
            seen.push(m.previous_model, m.reason);
            break;
          case 'loop_detected':
            seen.push(m.count);
            break;
          case 'warning':
            seen.push(m.message);
            break;
          case 'workspace_restored':
            seen.push(m.lost_host, m.turn);
            break;
          default: {
            const none: never = m;
            seen.push(none);
          }
        }
        break;
      default: {
        const none: never = m;
        seen.push(none);
      }
    }
  }
  return seen;
}

// A consumer written against the SDK, its values typed with the SDK's types, compiles against
// ours: our Query's methods are the SDK's, and what `isDurableAgentEvent` turns away is an SDK message.
export async function consumerWrittenForTheSdk(
  messages: AsyncIterable<SDK.SDKMessage>,
  control: Pick<SDK.Query, 'setModel' | 'setPermissionMode' | 'interrupt'>,
): Promise<string> {
  const onMessage = (m: SDK.SDKMessage): string => (m.type === 'result' && m.subtype === 'success' ? m.result : '');
  let last = '';
  for await (const m of messages) last = onMessage(m) || last;
  await control.setPermissionMode('acceptEdits');
  await control.setModel('gpt-4.1');
  await control.interrupt();
  return last;
}
async function* sdkMessagesOf(q: Ours.Query): AsyncGenerator<SDK.SDKMessage, void> {
  for await (const m of q) if (!isDurableAgentEvent(m)) yield m;
}
export function runsAgainstOurs(): Promise<string> {
  const options: SDK.Options = { cwd: '/tmp', maxTurns: 3, env: { PATH: '/usr/bin' }, permissionMode: 'acceptEdits' };
  const q = ourQuery({ prompt: 'hi', options });
  return consumerWrittenForTheSdk(sdkMessagesOf(q), q);
}

// Hook callbacks' types: each input variant, the output and the callback are the SDK's, both ways,
// so SDK code narrowing on any `hook_event_name` compiles (test/types/sdk-program.ts uses them).
// (A newer SDK may name events we do not have yet: ours must be among its, each the same.)
type OurHookEvent = Ours.HookInput['hook_event_name'];
type SameInputs = {
  [E in OurHookEvent]: Same<Extract<Ours.HookInput, { hook_event_name: E }>, Extract<SDK.HookInput, { hook_event_name: E }>>;
};
holds<Same<SameInputs[OurHookEvent], true>>();
export type HookEventsKnown = Conforms<OurHookEvent, SDK.HookEvent>;
holds<Same<Ours.PreToolUseHookInput, SDK.PreToolUseHookInput>>();
holds<Same<Ours.BaseHookInput, SDK.BaseHookInput>>();
// The output, the callback and the matcher are exactly the SDK's when it names no hook event we
// lack. A newer SDK that does (0.3.332: `PreSkillShellCommand`) widens its callback's input and
// output beyond ours, so those checks hold only for the pinned SDK; README says so.
type HookEventsOnlyInSdk = Exclude<SDK.HookEvent, OurHookEvent>;
type WhenSameEvents<T> = [HookEventsOnlyInSdk] extends [never] ? T : true;
holds<WhenSameEvents<Same<Ours.HookJSONOutput, SDK.HookJSONOutput>>>();
holds<WhenSameEvents<Same<Ours.SyncHookJSONOutput, SDK.SyncHookJSONOutput>>>();
holds<WhenSameEvents<Same<Ours.HookCallback, SDK.HookCallback>>>();
// A matcher of ours is one of the SDK's; the SDK's `onFailure` is not offered (no session would honour it).
type Assignable<T, U> = [T] extends [U] ? true : false;
holds<WhenSameEvents<Assignable<Ours.HookCallbackMatcher, SDK.HookCallbackMatcher>>>();
holds<WhenSameEvents<Assignable<Omit<SDK.HookCallbackMatcher, 'onFailure'>, Ours.HookCallbackMatcher>>>();

// AbortError and listSessions, as the SDK exports them.
holds<Same<InstanceType<typeof Ours.AbortError>, SDK.AbortError>>();
export type AbortErrorIsAnError = Conforms<InstanceType<typeof Ours.AbortError>, Error>;
export type ListSessionsConforms = Conforms<typeof Ours.listSessions, typeof SDK.listSessions>;
holds<Same<Ours.SDKSessionInfo, SDK.SDKSessionInfo>>();
export type ListSessionsOptionsAccepted = Conforms<SDK.ListSessionsOptions, Ours.ListSessionsOptions>;
