/**
 * Offline validation of a layer directory with the service's own code: every file is written into
 * an in-memory service (the same `put`s, schemas and messages as the HTTP API), then the
 * cross-document checks a write alone cannot make run against the cascade that results — a
 * recipe's engine and models resolve (by drafting a spawn, as a real one would), every `@label`
 * selects something, every referenced script, spec, document, MCP server and model instance exists.
 */
import { type ParsedYaml, parseYaml, pointerExists, positionOf } from '../config/yaml'
import type { DocumentService } from '../documents/service'
import { type Issue, isServerToolsError } from '../errors'
import { mcpServerPath } from '../mcp/server-doc'
import { catalogDocumentOf, parseModelName, providerPath } from '../models/documents'
import { surfaceDocumentOf } from '../recipes/documents'
import type { ProcessService, SpawnFinding } from '../recipes/spawn'
import type { ServerToolService } from '../tools/service'
import { type LayerFile, layerPathProblem, serverToolNameOf } from './layer'

export interface LayerProblem {
  /** Document path inside the layer. */
  path: string
  /** Which directory: the one validated, or the tenant layer given as context. */
  layer: 'target' | 'context'
  line?: number
  column?: number
  message: string
  severity: 'error' | 'warning'
}

export interface LayerValidationDeps {
  tools: ServerToolService
  documents: DocumentService
  processes: Pick<ProcessService, 'draft'>
}

export interface LayerValidationInput {
  tenant: string
  project: string
  files: readonly LayerFile[]
  /** The tenant layer, when a project directory is checked against it. */
  tenantFiles?: readonly LayerFile[]
}

const ACTOR = 'server-tools validate'

export async function validateLayer(deps: LayerValidationDeps, input: LayerValidationInput): Promise<LayerProblem[]> {
  const problems: LayerProblem[] = []
  const { tenant, project } = input
  if (input.tenantFiles && project !== '_tenant') await load(deps, tenant, '_tenant', input.tenantFiles, 'context', problems)
  const loaded = await load(deps, tenant, project, input.files, 'target', problems)
  const report = (file: LayerFile, issue: Issue, severity: LayerProblem['severity'] = 'error') =>
    problems.push(problemAt(file, issue, 'target', severity))

  for (const file of loaded) {
    const toolName = serverToolNameOf(file.path)
    if (toolName !== undefined) await checkToolReferences(deps, tenant, project, file, toolName, report)
    const catalog = catalogDocumentOf(file.path)
    if (catalog?.kind === 'model' && !(await deps.documents.read(tenant, project, providerPath(catalog.instance)))) {
      report(file, {
        pointer: '',
        message: `model instance '${catalog.instance}' has no ${providerPath(catalog.instance)} in this layer, an outer one or the bundled defaults`,
      })
    }
    const surface = surfaceDocumentOf(file.path)
    if (surface?.kind === 'recipe') await checkDraft(deps, tenant, project, file, { recipe: surface.name }, report)
    if (surface?.kind === 'engine') await checkDraft(deps, tenant, project, file, { engine: surface.name }, report)
  }
  // A problem about an absent field is a consequence (of a misspelt key, most often): it follows
  // the problems at real lines of its file, whatever line its parent mapping is on.
  const rank = (p: LayerProblem) => (consequences.has(p) ? 1 : 0)
  return problems.sort((a, b) =>
    a.layer !== b.layer
      ? a.layer === 'context'
        ? -1
        : 1
      : a.path < b.path
        ? -1
        : a.path > b.path
          ? 1
          : rank(a) - rank(b) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0),
  )
}

/** Problems whose pointer names a field the file does not have. */
const consequences = new WeakSet<LayerProblem>()
const parsedFiles = new WeakMap<LayerFile, ParsedYaml | undefined>()
function parsedFile(file: LayerFile): ParsedYaml | undefined {
  if (!parsedFiles.has(file)) {
    const parsed = parseYaml(file.body)
    parsedFiles.set(file, parsed.ok ? parsed.value : undefined)
  }
  return parsedFiles.get(file)
}

/** Writes each file through the service's own checks; answers the files that were accepted. */
async function load(
  deps: LayerValidationDeps,
  tenant: string,
  project: string,
  files: readonly LayerFile[],
  layer: LayerProblem['layer'],
  problems: LayerProblem[],
): Promise<LayerFile[]> {
  const accepted: LayerFile[] = []
  // The context layer is not what is being applied: its own validation fails on its problems, this one only mentions them.
  const severity: LayerProblem['severity'] = layer === 'target' ? 'error' : 'warning'
  for (const file of files) {
    const pathProblem = layerPathProblem(file.path, project)
    if (pathProblem) {
      problems.push({ path: file.path, layer, message: pathProblem, severity })
      continue
    }
    try {
      const toolName = serverToolNameOf(file.path)
      if (toolName !== undefined) await deps.tools.put(tenant, project, toolName, file.body, { actor: ACTOR })
      // every other kind (the allow-list included) is judged by the documents service's own write check
      else await deps.documents.put(tenant, project, file.path, file.body, { actor: ACTOR })
      accepted.push(file)
    } catch (e) {
      if (!isServerToolsError(e)) throw e
      const issues = e.details?.errors ?? []
      if (!issues.length) problems.push({ path: file.path, layer, message: e.message, severity })
      for (const i of issues) problems.push(problemAt(file, i, layer, severity))
    }
  }
  return accepted
}

type Report = (file: LayerFile, issue: Issue, severity?: LayerProblem['severity']) => void

/** The documents a tool names must exist somewhere in the cascade when it is called. */
async function checkToolReferences(
  deps: LayerValidationDeps,
  tenant: string,
  project: string,
  file: LayerFile,
  name: string,
  report: Report,
) {
  const view = await deps.tools.getView(tenant, project, name)
  const p = view.parameters as Record<string, unknown>
  const exists = async (path: string) => (await deps.documents.read(tenant, project, path)) !== undefined
  const refs: [string, string, string][] = [] // pointer, document path, what it is
  if (view.type === 'scripted' && typeof p.scriptPath === 'string') refs.push(['/parameters/scriptPath', p.scriptPath, 'script'])
  if (view.type === 'rest_api' && typeof p.specPath === 'string') refs.push(['/parameters/specPath', p.specPath, 'OpenAPI document'])
  if (view.type === 'doc_lookup' && typeof p.path === 'string') refs.push(['/parameters/path', p.path, 'document'])
  if ((view.type === 'mcp' || view.type === 'mcp_server') && typeof p.server === 'string')
    refs.push(['/parameters/server', mcpServerPath(p.server), 'MCP server document'])
  if (view.type === 'prompt_template' && typeof p.model === 'string') {
    const ref = parseModelName(p.model)
    if (typeof ref !== 'string') refs.push(['/parameters/model', providerPath(ref.instance), 'model provider document'])
  }
  let missing = 0
  for (const [pointer, path, what] of refs) {
    if (await exists(path)) continue
    missing++
    report(file, { pointer, message: `the ${what} '${path}' does not exist in this layer, an outer one or the bundled defaults` })
  }
  if (view.type === 'rest_api' && !missing) {
    // the spec parses and yields operations: the expansion's own problems
    const { problems } = await deps.tools.listAll(tenant, project)
    for (const pr of problems) if (pr.name === name && pr.path === file.path) report(file, { pointer: '/parameters', message: pr.message })
  }
}

/**
 * A spawn drafted from the recipe (or the engine alone): unknown engines and model instances are
 * its errors; a label that selects nothing is its warning, and an error here — on the file that
 * holds the selector. A name that matches no tool stays a warning: it may come from a pack that
 * is only known once its server answers.
 */
async function checkDraft(
  deps: LayerValidationDeps,
  tenant: string,
  project: string,
  file: LayerFile,
  body: { recipe?: string; engine?: string },
  report: Report,
) {
  let findings: SpawnFinding[]
  try {
    ;({ findings } = await deps.processes.draft(tenant, project, ACTOR, body))
  } catch (e) {
    if (!isServerToolsError(e)) throw e
    const issues = e.details?.errors ?? []
    if (!issues.length) report(file, { message: e.message })
    for (const i of issues) report(file, i)
    // unknown model instances stop a spawn before its selectors: draft again without them to check those too
    if (!issues.length || !issues.every((i) => i.pointer?.startsWith('/models'))) return
    ;({ findings } = await deps.processes.draft(tenant, project, ACTOR, { ...body, models: [] }))
  }
  const data = parseYaml(file.body)
  const own = body.engine !== undefined ? 'engine' : 'recipe' // draft({ engine }) also drafts the default recipe
  for (const f of findings) {
    if (f.document !== own) continue
    const list = data.ok ? ((data.value.data as Record<string, unknown> | null)?.[f.field] as unknown[] | undefined) : undefined
    const index = Array.isArray(list) ? list.indexOf(f.entry) : -1
    report(
      file,
      { pointer: index >= 0 ? `/${f.field}/${index}` : `/${f.field}`, message: f.message },
      f.kind === 'label-selects-nothing' ? 'error' : 'warning',
    )
  }
}

function problemAt(
  file: LayerFile,
  issue: Issue,
  layer: LayerProblem['layer'],
  severity: LayerProblem['severity'] = 'error',
): LayerProblem {
  let { line, column } = issue
  const parsed = issue.pointer !== undefined ? parsedFile(file) : undefined
  if (line === undefined && parsed && issue.pointer !== undefined) {
    const pos = positionOf(parsed, issue.pointer)
    if (pos) ({ line, column } = pos)
  }
  const problem: LayerProblem = {
    path: file.path,
    layer,
    ...(line !== undefined ? { line, column: column ?? 1 } : {}),
    message: issue.message,
    severity,
  }
  if (parsed && issue.pointer && !pointerExists(parsed, issue.pointer)) consequences.add(problem)
  return problem
}
