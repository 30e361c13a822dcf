/** LLM calls for prompt-template tools: the model catalog and the OpenAI/Anthropic wire clients. */
import type { EgressClient } from '../egress/client'
import type { WireType } from '../models/documents'
import type { WireClient } from './wire'

export * from './catalog'
export * from './wire'

/**
 * One client per wire type, all on the same egress client. Each wire client's code is imported
 * on its first completion: a container that never runs a prompt template never loads it.
 */
export function wireClients(http: Pick<EgressClient, 'request'>): Record<WireType, WireClient> {
  const lazy = (load: () => Promise<WireClient>): WireClient => {
    let client: Promise<WireClient> | undefined
    return { complete: async (req) => (await (client ??= load())).complete(req) }
  }
  return {
    openai: lazy(() => import('./openai').then((m) => new m.OpenAiChatClient(http))),
    anthropic: lazy(() => import('./anthropic').then((m) => new m.AnthropicMessagesClient(http))),
  }
}
