/**
 * utcp-kit/testing: test doubles that fail loudly. `ScriptedModel` plays back model turns for agent tests,
 * throwing on a call past its script and, from `assertDone()`, on turns never used.
 */
export { ScriptedModel, textTurn, toolCallsTurn } from './scripted-model.js';
export type { ScriptedTurn } from './scripted-model.js';
