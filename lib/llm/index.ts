/** LLM calls for prompt-template tools: the model catalog and the OpenAI/Anthropic wire clients. */
import type { EgressClient } from '../egress/client'
import type { WireType } from '../models/documents'
import type { WireClient } from './wire'

// Not ./catalog: only the prompt-template runtime reads the catalog, and imports it directly, so
// it is not part of every cold start.
export * from './wire'

/**
 * The wire clients' code, loaded by the caller: the composition root owns the dynamic imports, and
 * so where the bundle's chunks are cut (functions/lazy/).
 */
export interface WireModules {
  openai(): Promise<typeof import('./openai')>
  anthropic(): Promise<typeof import('./anthropic')>
}

/**
 * One client per wire type, all on the same egress client. Each wire client's code is imported
 * on its first completion: a container that never runs a prompt template never loads it.
 */
export function wireClients(http: Pick<EgressClient, 'request'>, load: WireModules): Record<WireType, WireClient> {
  const lazy = (load: () => Promise<WireClient>): WireClient => {
    let client: Promise<WireClient> | undefined
    return { complete: async (req) => (await (client ??= load())).complete(req) }
  }
  return {
    openai: lazy(() => load.openai().then((m) => new m.OpenAiChatClient(http))),
    anthropic: lazy(() => load.anthropic().then((m) => new m.AnthropicMessagesClient(http))),
  }
}
