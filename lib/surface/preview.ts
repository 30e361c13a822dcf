/**
 * The surface preview: what a process spawned now would get on its first turn — computed by the
 * spawn's own draft and the surface's own classification and rendering on a record that is never
 * stored, so the answer cannot drift from a real spawn.
 */
import { type Issue, invalidInput } from '../errors'
import type { ProcessService } from '../recipes/spawn'
import { estimateTokens } from '../tools/code-declaration'
import type { Provenance } from '../tools/provenance'
import type { ServerToolService } from '../tools/service'
import type { FamilyGroup } from './classify'
import type { SurfaceService } from './surface'

export const MAX_PREVIEW_EXTRA_TOOLS = 256

export interface PreviewFamily {
  family: string
  tools: string[]
  status: FamilyGroup['status']
  tier: FamilyGroup['tier']
  /** Demoted for a reason other than the count: `nameLength` or `schemaBytes`. */
  reason?: FamilyGroup['reason']
}

export interface SurfacePreview {
  recipe: string
  engine: string
  models: string[]
  allowed: string[]
  /** The recipe's allowedToolsDefer as the spawn resolved it (as in the spawn answer); `families` has every deferred tool. */
  deferredByRecipe: string[]
  warnings: string[]
  /** Exactly the body of GET …/processes/{id}/manifest?format=native for the first turn. */
  manifest: unknown
  families: PreviewFamily[]
  /** Per visible tool: the layer it resolves from and the layers it shadows (a pack's sub-tools: the pack's). */
  provenance: Record<string, Provenance>
  /** A turn in code mode: the declaration as the model reads it in execute_code's description, and its size. */
  code?: {
    declaration: string
    declarationBytes: number
    /** estimateTokens of the declaration (no tokenizer is bundled). */
    estimatedTokens: number
    budgetBytes: number
    budgetBy: string
    chosenBy: 'recipe' | 'endpoint'
    declared: string[]
    overBudget: string[]
  }
}

export async function previewSurface(
  deps: { processes: ProcessService; surface: SurfaceService; tools: ServerToolService },
  tenant: string,
  project: string,
  actor: string,
  body: Record<string, unknown>,
): Promise<SurfacePreview> {
  const { extraTools, spawnBody } = splitPreviewBody(body)
  const { process, warnings } = await deps.processes.draft(tenant, project, actor, spawnBody)
  const surface = deps.surface.detached(process)
  const [turn, visible, provenance] = await Promise.all([
    surface.turnWith(extraTools),
    surface.visible(),
    deps.tools.provenance(tenant, project),
  ])
  const manifest = JSON.parse(surface.manifestOf(turn, { format: 'native', extraTools }))
  const code = surface.codeView(turn)
  const byTool: Record<string, Provenance> = {}
  for (const t of visible.tools) byTool[t.name] = provenance.get(t.pack ?? t.name) ?? { source: t.source, shadows: [] }
  return {
    recipe: process.recipe,
    engine: process.engine,
    models: process.models,
    allowed: process.allowed,
    ...(process.allowedToolsOverride ? { allowedToolsOverride: process.allowedToolsOverride } : {}),
    deferredByRecipe: process.deferred,
    warnings,
    manifest,
    families: turn.groups.map((g) => ({
      family: g.family,
      tools: g.names,
      status: g.status,
      tier: g.tier,
      ...(g.reason ? { reason: g.reason } : {}),
    })),
    provenance: byTool,
    ...(code
      ? {
          code: {
            declaration: code.declaration.text,
            declarationBytes: code.facts.declarationBytes,
            estimatedTokens: estimateTokens(code.declaration.text),
            budgetBytes: code.facts.budgetBytes,
            budgetBy: code.facts.budgetBy,
            chosenBy: code.facts.chosenBy,
            declared: code.declaration.names,
            overBudget: code.facts.overBudget,
          },
        }
      : {}),
  }
}

/** The spawn's fields go to the spawn's own check; `extraTools` is the manifest's. */
function splitPreviewBody(body: Record<string, unknown>): { extraTools: string[]; spawnBody: Record<string, unknown> } {
  const { extraTools: raw, ...spawnBody } = body
  if (raw === undefined || raw === null) return { extraTools: [], spawnBody }
  const issues: Issue[] = []
  if (!Array.isArray(raw)) issues.push({ pointer: '/extraTools', message: 'extraTools must be a list of tool names' })
  else if (raw.length > MAX_PREVIEW_EXTRA_TOOLS)
    issues.push({ pointer: '/extraTools', message: `extraTools may name at most ${MAX_PREVIEW_EXTRA_TOOLS} tools` })
  else
    raw.forEach(
      (n, i) => typeof n !== 'string' && issues.push({ pointer: `/extraTools/${i}`, message: `extraTools[${i}] must be a tool name` }),
    )
  if (issues.length) throw invalidInput(`the preview request is invalid (${issues.map((i) => i.message).join('; ')})`, issues)
  return { extraTools: [...new Set(raw as string[])], spawnBody }
}
