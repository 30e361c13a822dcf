/**
 * Each completion as a GenAI client span (`chat <model>`, the semantic conventions' name and
 * `gen_ai.*` attributes): provider, requested and answering model, token usage, finish reason.
 * Never the prompt or the answer (either may hold a tenant's data or a substituted secret).
 */
import type { Tracer } from '../runtime/tracer'
import type { WireClient } from './wire'

export function tracedWires(wires: Record<string, WireClient>, tracer: Tracer): Record<string, WireClient> {
  return Object.fromEntries(
    Object.entries(wires).map(([wireType, wire]) => [
      wireType,
      {
        complete: (req) =>
          tracer.span(
            `chat ${req.model.modelId}`,
            {
              kind: 'client',
              attributes: {
                'gen_ai.operation.name': 'chat',
                'gen_ai.provider.name': wireType,
                'gen_ai.request.model': req.model.modelId,
                'gen_ai.request.max_tokens': req.maxTokens,
                'gen_ai.request.temperature': req.temperature,
                'gen_ai.output.type': req.outputSchema ? 'json' : 'text',
                'server_tools.tenant': req.tenant,
              },
            },
            async (span) => {
              const completion = await wire.complete(req)
              span.setAttributes({
                'gen_ai.response.model': completion.providerModel,
                'gen_ai.response.finish_reasons': completion.stopReason ? [completion.stopReason] : undefined,
                'gen_ai.usage.input_tokens': completion.usage.inputTokens,
                'gen_ai.usage.output_tokens': completion.usage.outputTokens,
              })
              return completion
            },
          ),
      } satisfies WireClient,
    ]),
  )
}
