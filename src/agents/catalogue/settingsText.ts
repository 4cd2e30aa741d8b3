// What package.json says of the agents and backends in its settings, made from the catalogue and
// the backend descriptors, so the text cannot drift from what runs: `npm run manifest` writes it,
// test/scripts/manifestText.test.ts fails when package.json differs.
import { BACKEND_KINDS, BACKENDS } from '../../core/backendKinds';
import { KNOWN_AGENTS, KNOWN_AGENT_IDS, type KnownAgent } from './knownAgents';

/** One setting's `enum` and `enumDescriptions`, in the same order. */
export interface EnumText {
  readonly enum: readonly string[];
  readonly enumDescriptions: readonly string[];
}

const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
const command = (agent: KnownAgent) => agent.installed.argv.join(' ');

/** `ultraplan.agent.choice`. */
export function agentChoiceText(): EnumText {
  const first = KNOWN_AGENTS.map((agent) => `${agent.name} (\`${agent.bin}\`)`).join(', ');
  return {
    enum: ['auto', ...KNOWN_AGENT_IDS, 'custom', 'demo'],
    enumDescriptions: [
      `The first installed agent: ${first}. With none installed, the scripted demo, with a notice saying how to install one.`,
      ...KNOWN_AGENTS.map(
        (agent) => `${agent.name}: \`${command(agent)}\` when installed, else \`${agent.npx.argv.join(' ')}\`. ${sentence(agent.login)}`,
      ),
      'Any ACP agent: the command in `ultraplan.agent.command`.',
      'The scripted demo scenario (no agent; labelled as a demo).',
    ],
  };
}

/** `ultraplan.review.verifierAgent`. */
export function verifierAgentText(): EnumText {
  return {
    enum: ['same', ...KNOWN_AGENT_IDS],
    enumDescriptions: [
      'The agent you plan with verifies what its finder runs found.',
      ...KNOWN_AGENTS.map((agent) => `${agent.name} verifies.`),
    ],
  };
}

/** `ultraplan.backend`. */
export function backendText(): EnumText {
  return { enum: BACKEND_KINDS, enumDescriptions: BACKEND_KINDS.map((kind) => BACKENDS[kind].settingDescription) };
}

/** Every setting whose values come from the catalogue or the descriptors. */
export const MANIFEST_ENUMS: Readonly<Record<string, () => EnumText>> = {
  'ultraplan.backend': backendText,
  'ultraplan.agent.choice': agentChoiceText,
  'ultraplan.review.verifierAgent': verifierAgentText,
};
