/**
 * A script run as a span (`sandbox.run`), with its sibling calls as children: the host calls a
 * script makes arrive as a worker's messages, outside the run's async context, so the host's tool
 * functions are bound to the run's span before the script gets them. Counts the queue depth at
 * each run and the refusals (OVERLOADED), which `onRefusal` also reports (the audit log).
 */
import { isServerToolsError } from '../errors'
import type { Metrics } from '../runtime/metrics'
import type { Tracer } from '../runtime/tracer'
import type { SandboxRequest, SandboxResult } from './execute'

export interface TracedSandboxTarget {
  run(req: SandboxRequest): Promise<SandboxResult>
  waiting?(): number
}

export interface SandboxRefusal {
  tenant: string
  project: string
  reason: string
}

export function tracedSandbox<S extends TracedSandboxTarget>(
  sandbox: S,
  tracer: Tracer,
  metrics: Metrics,
  onRefusal?: (refusal: SandboxRefusal) => void,
): S {
  const run = (req: SandboxRequest): Promise<SandboxResult> =>
    tracer.span(
      'sandbox.run',
      {
        attributes: {
          'server_tools.tenant': req.host?.context.tenant,
          'server_tools.project': req.host?.context.project,
          'server_tools.process': req.host?.context.processId,
          'server_tools.depth': req.host?.depth,
        },
      },
      async (span) => {
        if (sandbox.waiting) metrics.record('SandboxQueueDepth', sandbox.waiting(), {})
        const tools = req.host?.tools
        const host =
          req.host && tools
            ? {
                ...req.host,
                tools: {
                  call: tracer.bind(tools.call.bind(tools)),
                  delegate: tracer.bind(tools.delegate.bind(tools)),
                  list: tracer.bind(tools.list.bind(tools)),
                  has: tracer.bind(tools.has.bind(tools)),
                },
              }
            : req.host
        try {
          const result = await sandbox.run({ ...req, ...(host ? { host } : {}) })
          if ('error' in result) span.fail(result.error)
          return result
        } catch (e) {
          if (isServerToolsError(e, 'OVERLOADED')) {
            metrics.record('SandboxRefusals', 1, { Reason: 'queue_full' })
            if (req.host) onRefusal?.({ tenant: req.host.context.tenant, project: req.host.context.project, reason: 'queue_full' })
          }
          throw e
        }
      },
    )
  return { ...sandbox, run }
}
