/** Worker Versioning settings (src/worker/deployment.ts): both or neither, each named when wrong. */
import { deploymentFromEnv, deploymentProblem, versioningOptions } from '../../src/worker/deployment';
import { buildOf } from '../../src/client/visibility';

test('DURABLE_AGENT_DEPLOYMENT and DURABLE_AGENT_BUILD_ID: both, or neither (unversioned)', () => {
  expect(deploymentFromEnv({})).toBeUndefined();
  expect(deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT: 'agents', DURABLE_AGENT_BUILD_ID: 'v2.1+abc' })).toEqual({
    name: 'agents',
    buildId: 'v2.1+abc',
  });
  expect(() => deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT: 'agents' })).toThrow(/^DURABLE_AGENT_BUILD_ID is not set/);
  expect(() => deploymentFromEnv({ DURABLE_AGENT_BUILD_ID: 'b1' })).toThrow(/^DURABLE_AGENT_DEPLOYMENT is not set/);
  expect(() => deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT: 'a.b', DURABLE_AGENT_BUILD_ID: 'b1' })).toThrow(
    /^DURABLE_AGENT_DEPLOYMENT: 'a\.b' must be/,
  );
  expect(() => deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT: 'a', DURABLE_AGENT_BUILD_ID: 'b:1' })).toThrow(
    /^DURABLE_AGENT_BUILD_ID: 'b:1' must be/,
  );
});

test('a versioned worker pins sessions by default; an unversioned one sets nothing', () => {
  expect(versioningOptions(undefined)).toEqual({});
  expect(versioningOptions({ name: 'agents', buildId: 'b1' })).toEqual({
    workerDeploymentOptions: {
      version: { deploymentName: 'agents', buildId: 'b1' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    },
  });
  expect(deploymentProblem({ name: '', buildId: 'b' }, { name: '--deployment', buildId: '--build-id' })).toMatch(
    /^--deployment: '' must be/,
  );
  expect(() => versioningOptions({ name: 'ok', buildId: ' ' })).toThrow(/^buildId: ' ' must be/);
});

test("a run's build: the structured version, else the string form the server fills", () => {
  expect(buildOf(undefined)).toBeUndefined();
  expect(buildOf({ versioningInfo: null })).toBeUndefined();
  expect(buildOf({ versioningInfo: { deploymentVersion: { deploymentName: 'd', buildId: 'B' } } })).toBe('B');
  expect(buildOf({ versioningInfo: { version: 'd:B2' } })).toBe('B2');
  expect(buildOf({ versioningInfo: { version: 'd.B3' } })).toBe('B3');
  // A listing: no versioning info, the visibility attribute.
  const listed = {
    indexedFields: {
      TemporalWorkerDeploymentVersion: {
        metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from('Keyword') },
        data: Buffer.from('"drill:A"'),
      },
    },
  };
  expect(buildOf({ searchAttributes: listed })).toBe('A');
  expect(buildOf({ searchAttributes: { indexedFields: {} } })).toBeUndefined();
});
