/**
 * Type-level conformance with the Claude Agent SDK, checked by the compiler against the SDK's own
 * `.d.ts` (`npm run typecheck` compiles this file; test/types/sdk-conformance.test.ts compiles it
 * on its own and shows that a broken field fails it). Nothing here runs.
 *
 * `Conforms<Ours, Theirs>` fails to compile ("does not satisfy the constraint") when a value of our
 * type could not be used where the SDK's type is expected.
 */
import type * as SDK from '@anthropic-ai/claude-agent-sdk';
import type * as Ours from '../../src/index';
import type { SessionEvent } from '../../src/shared/events';
import type { OPTION_SUPPORT } from '../../src/client/sdk-option-support';

type Conforms<T extends U, U> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const holds = <T extends true>(): T => true as T;

// Every message our stream can emit is either in our SDK-typed union or one of our own events
// (`stream_event`s come from the live channel, never from the event log)…
holds<Same<SessionEvent | Ours.SDKPartialAssistantMessage, Ours.SDKMessage | Ours.DurableAgentEvent>>();

// …each member of the SDK-typed union is assignable to its own variant of the SDK's union…
type Checked =
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
holds<Same<Exclude<Ours.SDKMessage, Checked>, never>>();

// …so the union as a whole, and the exported names, are the SDK's.
export type StreamConforms = Conforms<Ours.SDKMessage, SDK.SDKMessage>;
export type ResultConforms = Conforms<Ours.SDKResultMessage, SDK.SDKResultMessage>;
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

// Query: ours can stand wherever the SDK's is expected, every method with the SDK's signature.
export type QueryConforms = Conforms<Ours.Query, SDK.Query>;
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
  | 'streamInput';
export type MethodsConform = Conforms<Pick<Ours.Query, Implemented>, Pick<SDK.Query, Implemented>>;
export type QueryFunctionConforms = Conforms<
  typeof Ours.query,
  (params: { prompt: string | AsyncIterable<SDK.SDKUserMessage>; options?: SDK.Options }) => SDK.Query
>;

// A consumer written against the SDK compiles against us unchanged.
export async function consumerWrittenForTheSdk(
  query: (params: { prompt: string | AsyncIterable<SDK.SDKUserMessage>; options?: SDK.Options }) => SDK.Query,
): Promise<string> {
  const onMessage = (m: SDK.SDKMessage): string => (m.type === 'result' && m.subtype === 'success' ? m.result : '');
  let last = '';
  const q = query({ prompt: 'hi', options: { cwd: '/tmp', maxTurns: 3, env: { PATH: '/usr/bin' }, permissionMode: 'acceptEdits' } });
  for await (const m of q) last = onMessage(m) || last;
  return last;
}
declare const ourQuery: typeof Ours.query;
export const runsAgainstOurs = (): Promise<string> => consumerWrittenForTheSdk(ourQuery);
