/**
 * User input reaching the transcript: follow-ups that start a turn, and steers that join the
 * running one before its next model call (ARCHITECTURE.md#the-turn). Both wait in the carried
 * `inbox`, so neither is lost to a continue-as-new or a worker crash.
 */
import type { EventLog, LoopState } from './state';

export function hasSteers(state: LoopState): boolean {
  return state.input.inbox.some((i) => i.steer);
}

/** Every waiting message starts the next turn (a steer that found no running turn included). */
export function takeFollowUps(state: LoopState, log: EventLog): string {
  const text = state.input.inbox
    .splice(0, state.input.inbox.length)
    .map((i) => i.text)
    .join('\n\n');
  state.messages.push({ role: 'user', content: text });
  log.emit({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null });
  return text;
}

/** Steers join the transcript after the current tool results; null when there are none. */
export function takeSteers(state: LoopState, log: EventLog): string | null {
  if (!hasSteers(state)) return null;
  const text = state.input.inbox
    .filter((i) => i.steer)
    .map((i) => i.text)
    .join('\n\n');
  state.input.inbox = state.input.inbox.filter((i) => !i.steer);
  const last = state.messages[state.messages.length - 1]!;
  if (last.role === 'user' && Array.isArray(last.content)) last.content.push({ type: 'text', text });
  else state.messages.push({ role: 'user', content: text });
  log.emit({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null });
  return text;
}
