// The ACP SDK, in the one place that imports it. Only the ACP agent runtime uses it, so in the
// bundles it comes with that runtime's chunk, loaded when an ACP agent is first made
// (acpAgentFactory.ts), and shares the one copy of zod with the rest.
import * as sdk from '@agentclientprotocol/sdk';

type AcpSdk = typeof sdk;

export function acpSdk(): AcpSdk {
  return sdk;
}
