/** The client refuses secret-looking `env` names before anything starts (on a real server: nothing is created). */
import { DurableAgentClient, SessionNotFoundError } from '../../src/client/client';
import { testAddress } from '../helpers/server';

test('the client refuses env names that look secret, before anything starts', async () => {
  const client = await DurableAgentClient.connect({ address: testAddress() });
  try {
    const sessionId = `secret-env-${Date.now()}`;
    await expect(client.start({ prompt: 'x', cwd: '/w', sessionId, env: { ANTHROPIC_API_KEY: 'a' } })).rejects.toThrow(
      /^env: ANTHROPIC_API_KEY looks secret/,
    );
    await expect(client.get(sessionId)).rejects.toBeInstanceOf(SessionNotFoundError);
  } finally {
    await client.close();
  }
});
