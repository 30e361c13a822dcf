/** Processes: spawn, the per-turn manifest, tool calls through the surface, empty-response diagnosis. */
import type { Context } from 'hono'
import { writeConditions } from '../../../lib/documents/preconditions'
import { capIssues, type Issue, invalidInput } from '../../../lib/errors'
import type { ProcessRecord } from '../../../lib/recipes/ports'
import { SPAWN_ITEM_LIMITS } from '../../../lib/recipes/spawn-limits'
import { iso } from '../../../lib/runtime/clock'
import type { DiagnosisMessage } from '../../../lib/surface/diagnosis'
import { MANIFEST_FORMATS, type ManifestFormat, NATIVE_DEFERRAL_OF, STRICT_DIALECT } from '../../../lib/surface/formats'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { principalOf, requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { etag, objectBody, preconditionsOf, projectParam, requestSignal, tenantParam } from '../request'

export function processRoutes(deps: AppDeps) {
  // The caller's subject is part of every key: a process answers only the subject that spawned it,
  // on these routes as on MCP sessions (another subject's process is a 404, like an absent one).
  const key = (c: Context<AuthEnv>) => ({
    tenant: tenantParam(c),
    project: projectParam(c),
    id: c.req.param('id') ?? '',
    subject: principalOf(c).subject,
  })
  return new Hono<AuthEnv>()
    .post('/projects/:project/processes', requireScope('tools:invoke'), async (c) => {
      const tenant = tenantParam(c)
      const project = projectParam(c)
      const { process, warnings } = await deps.processes.spawn(tenant, project, principalOf(c).subject, () =>
        objectBody(c, deps.yaml, SPAWN_ITEM_LIMITS),
      )
      c.header('location', `/brain/${tenant}/projects/${project}/processes/${process.id}`)
      return jsonAnswer(c, { ...view(process), warnings }, 201)
    })
    .get('/projects/:project/processes/:id', requireScope('tools:read'), async (c) => jsonAnswer(c, view(await deps.processes.get(key(c)))))
    .get('/projects/:project/processes/:id/manifest', requireScope('tools:read'), async (c) => {
      const format = (c.req.query('format') ?? 'native') as ManifestFormat
      if (!MANIFEST_FORMATS.includes(format))
        throw invalidInput(`format must be one of ${MANIFEST_FORMATS.join(', ')}`, [
          { pointer: '/format', message: `unknown format '${format.slice(0, 40)}'` },
        ])
      const extraTools = (c.req.queries('extraTools') ?? [])
        .flatMap((v) => v.split(','))
        .map((s) => s.trim())
        .filter(Boolean)
      const deferLoading = c.req.query('deferLoading')
      if (deferLoading !== undefined && !['true', 'false'].includes(deferLoading)) throw invalidInput('deferLoading must be true or false')
      if (deferLoading === 'true' && !NATIVE_DEFERRAL_OF[format])
        throw invalidInput(`deferLoading applies to format=${Object.keys(NATIVE_DEFERRAL_OF).join(' or format=')} only`)
      const strict = c.req.query('strict')
      if (strict !== undefined && !['true', 'false'].includes(strict)) throw invalidInput('strict must be true or false')
      if (strict === 'true' && !STRICT_DIALECT[format])
        throw invalidInput(`strict applies to format=${Object.keys(STRICT_DIALECT).join(', format=')} only`, [
          { pointer: '/strict', message: `format '${format}' has no strict tools` },
        ])
      // bytes encoded once per rendered manifest, not once per request
      const body = await deps.surface.manifestBytes(key(c), {
        format,
        extraTools,
        // absent: the model catalog's deferral decides (auto = the endpoint's own form where it has one)
        ...(deferLoading !== undefined ? { deferLoading: deferLoading === 'true' } : {}),
        ...(strict === 'true' ? { strict: true } : {}),
      })
      return c.body(body, 200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
    })
    .post('/projects/:project/processes/:id/tool-calls', requireScope('tools:invoke'), async (c) => {
      const body = await objectBody(c, deps.yaml)
      // The request's signal ends the whole call tree when the client goes away (as on the invoke
      // route); a tool refused for capacity stays a tool error here, a result the model can act on.
      // A quota refusal is this request's 429 with Retry-After (over MCP it is a tool error).
      const outcome = await deps.surface.call(deps.dispatcher, key(c), body.name, body.params ?? {}, {
        signal: requestSignal(c),
        refused: 'throw',
      })
      // A client tool (spec §7): the backend runs it with the validated params.
      if (outcome.clientCall)
        return jsonAnswer(c, { isError: false, runOn: 'client', name: outcome.clientCall.name, params: outcome.clientCall.params })
      return jsonAnswer(c, { isError: outcome.isError, content: outcome.content })
    })
    .put('/projects/:project/processes/:id/client-tools', requireScope('tools:invoke'), async (c) => {
      // Version 0 = no client tools declared yet, so If-None-Match: * means "declare only once".
      const conditions = await writeConditions(
        `the client tools of process '${c.req.param('id')}'`,
        preconditionsOf(c),
        async () => (await deps.processes.get(key(c))).clientToolsVersion ?? 0,
      )
      const result = await deps.processes.setClientTools(
        key(c),
        await objectBody(c, deps.yaml),
        conditions.createOnly ? 0 : conditions.expectedVersion,
      )
      c.header('etag', etag(result.version))
      return jsonAnswer(c, { clientTools: result.names, version: result.version, warnings: result.warnings })
    })
    .post('/projects/:project/processes/:id/diagnostics/empty-response', requireScope('tools:invoke'), async (c) => {
      const input = diagnosisInput(await objectBody(c, deps.yaml))
      const surface = await deps.surface.open(key(c))
      return jsonAnswer(c, await surface.diagnoseEmptyResponse(input))
    })
}

function view(p: ProcessRecord) {
  return {
    id: p.id,
    project: p.project,
    recipe: p.recipe,
    engine: p.engine,
    role: p.role,
    roles: p.roles,
    models: p.models,
    allowed: p.allowed,
    promoted: p.promoted,
    // Only the recipe's allowedToolsDefer: the tools' own defaults defer more, which the manifest shows.
    deferredByRecipe: p.deferred,
    keep: p.keep,
    dropFirst: p.dropFirst,
    activationTtlSeconds: p.activationTtlMs / 1000,
    clientTools: (p.clientTools ?? []).map((t) => t.name),
    clientToolsVersion: p.clientToolsVersion ?? 0,
    ...(p.reserve !== undefined ? { reserve: p.reserve } : {}),
    ...(p.allowedToolsOverride ? { allowedToolsOverride: p.allowedToolsOverride } : {}),
    ...(p.idleTtlMs !== undefined ? { idleTimeoutSeconds: p.idleTtlMs / 1000 } : {}),
    activations: Object.fromEntries(
      Object.entries(p.activations)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([n, at]) => [n, iso(at)]),
    ),
    createdAt: iso(p.createdAt),
    createdBy: p.createdBy,
    expiresAt: iso(p.expiresAt),
  }
}

/** `{ messages: [{ role, content }], offeredTools, finishReason }`; offeredTools may be names or tool objects of any format. */
function diagnosisInput(body: Record<string, unknown>): { messages: DiagnosisMessage[]; offeredTools: string[]; finishReason?: string } {
  const issues: Issue[] = []
  const messages: DiagnosisMessage[] = []
  if (!Array.isArray(body.messages)) issues.push({ pointer: '/messages', message: 'messages must be a list of { role, content }' })
  else
    body.messages.forEach((m, i) => {
      if (!m || typeof m !== 'object' || typeof (m as { role?: unknown }).role !== 'string')
        issues.push({ pointer: `/messages/${i}`, message: `messages[${i}] must be an object with a string role` })
      else messages.push({ role: (m as { role: string }).role, content: (m as { content?: unknown }).content })
    })
  const offeredTools: string[] = []
  const offered = body.offeredTools ?? []
  if (!Array.isArray(offered))
    issues.push({ pointer: '/offeredTools', message: 'offeredTools must be a list of tool names or tool objects' })
  else
    offered.forEach((t, i) => {
      const name =
        typeof t === 'string'
          ? t
          : ((t as { name?: unknown; function?: { name?: unknown } } | null)?.name ??
            (t as { function?: { name?: unknown } } | null)?.function?.name)
      if (typeof name !== 'string') issues.push({ pointer: `/offeredTools/${i}`, message: `offeredTools[${i}] has no tool name` })
      else offeredTools.push(name)
    })
  if (body.finishReason !== undefined && body.finishReason !== null && typeof body.finishReason !== 'string')
    issues.push({ pointer: '/finishReason', message: 'finishReason must be a string' })
  if (issues.length)
    throw invalidInput(
      `the diagnosis request is invalid (${capIssues(issues)
        .map((i) => i.message)
        .join('; ')})`,
      issues,
    )
  return { messages, offeredTools, ...(typeof body.finishReason === 'string' ? { finishReason: body.finishReason } : {}) }
}
