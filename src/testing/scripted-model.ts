/**
 * The scripted model, everything tests and the CLI need from one import: the server
 * (scripted-server), the scenario format (scenario) and the `scripted-model` command (cli).
 */
export * from './scenario';
export * from './scripted-server';
export * from './scripted-model-cli';
