/** The texts the model sees for calls that cannot run, and how tools are hidden. */
import type { ToolSpec } from '../../src/shared/tools';
import { invalidCallReason, visibleTools } from '../../src/workflows/session/tool-calls';
import { BUDGET_REFUSAL } from '../../src/shared/model-texts';

const spec = (name: string): ToolSpec => ({ name, description: name, inputSchema: { type: 'object' }, readOnly: true });

describe('invalidCallReason', () => {
  const specs = [spec('Read'), spec('Bash'), spec('Grep')];

  test('an unknown tool: every available tool is listed, comma-separated', () => {
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Wrte', input: {} }, specs)).toBe(
      'Error: No such tool available: Wrte. Available tools: Read, Bash, Grep',
    );
  });

  test('malformed arguments of up to 200 characters are quoted whole', () => {
    const raw = `{"command": "${'x'.repeat(187)}`;
    expect(raw).toHaveLength(200);
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Bash', input: {}, raw_input: raw }, specs)).toBe(
      `InputValidationError: the arguments for Bash are not valid JSON (${raw}). Send a JSON object matching the tool's schema.`,
    );
  });

  test('longer ones are cut at 200 characters with an ellipsis', () => {
    const raw = `{"command": "${'x'.repeat(500)}`;
    expect(invalidCallReason({ type: 'tool_use', id: 'x', name: 'Bash', input: {}, raw_input: raw }, specs)).toBe(
      `InputValidationError: the arguments for Bash are not valid JSON (${raw.slice(0, 200)}…). Send a JSON object matching the tool's schema.`,
    );
  });
});

test('visibleTools: a bare disallowed name hides the tool, spaces around it ignored as in permission rules', () => {
  expect(visibleTools([spec('Read'), spec('Bash')], { disallowedTools: [' Bash '] }).map((s) => s.name)).toEqual(['Read']);
});

test('the budget refusal tells the model why its calls did not run', () => {
  expect(BUDGET_REFUSAL).toBe('Not run: the session reached its maximum budget.');
});
