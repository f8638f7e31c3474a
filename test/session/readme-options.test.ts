/**
 * README claims about session options and worker settings, each checked on a real session:
 * `idleTimeoutMs`, `searchAttributes: false`, and `DURABLE_AGENT_PRICING_FILE`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { SEARCH_ATTRIBUTES } from '../../src/shared/api';
import { useHarness } from '../helpers/harness';

// Read by the harness's worker when it is created (this file's beforeAll); jest gives each test
// file its own copy of process.env.
const pricingFile = path.join(mkdtempSync(path.join(tmpdir(), 'da-pricing-')), 'pricing.json');
writeFileSync(pricingFile, JSON.stringify({ 'acme-private-7b': { input: 2, output: 8, cacheRead: 0.5 } }));
process.env.DURABLE_AGENT_PRICING_FILE = pricingFile;

const h = useHarness();

test('an interactive session with idleTimeoutMs closes by itself once idle, and completes', async () => {
  const started = Date.now();
  const handle = await h.start({ name: 'idle', turns: [turn.text('Anything else?')] }, { interactive: true, idleTimeoutMs: 1_500 });
  // Nobody sends a follow-up or closes it: only the idle timeout can end it (the default is a day).
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'success', result: 'Anything else?', num_turns: 1 });
  expect((await handle.workflow.describe()).status.name).toBe('COMPLETED');
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
});

test('searchAttributes: false upserts nothing; the default indexes the session', async () => {
  const keys = Object.values(SEARCH_ATTRIBUTES) as string[];
  const indexed = async (searchAttributes: boolean | undefined) => {
    const handle = await h.start(
      { name: `index-${searchAttributes}`, turns: [turn.text('ok')] },
      searchAttributes === undefined ? {} : { searchAttributes },
    );
    expect(await handle.result()).toMatchObject({ subtype: 'success' });
    const { searchAttributes: attrs } = await handle.workflow.describe();
    return Object.keys(attrs)
      .filter((k) => keys.includes(k))
      .sort();
  };
  expect(await indexed(false)).toEqual([]);
  // The same session with the default: the check above can see upserts when there are any.
  expect(await indexed(undefined)).toEqual(['AgentCostUsd', 'AgentModel', 'AgentStatus', 'AgentTurns']);
});

test('DURABLE_AGENT_PRICING_FILE prices a model the built-in table does not know', async () => {
  const handle = await h.start(
    { name: 'priced', turns: [turn.text('priced', { usage: { prompt_tokens: 1_000, completion_tokens: 100, cached_tokens: 400 } })] },
    { model: 'acme-private-7b' },
  );
  const result = await handle.result();
  // input 2, output 8, cache read 0.5 USD per million tokens.
  const expected = (600 * 2 + 100 * 8 + 400 * 0.5) / 1e6;
  expect(result.total_cost_usd).toBeCloseTo(expected, 12);
  expect(result.modelUsage['acme-private-7b']).toMatchObject({ inputTokens: 600, outputTokens: 100, costBasis: 'list' });
});
