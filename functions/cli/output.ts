/** What the CLI prints: problems (text, JSON, GitHub annotations), plans, previews, progress. */
import { join } from 'node:path'
import { countChanges, type Plan } from '../../lib/layers/plan'
import type { LayerProblem } from '../../lib/layers/validate'
import type { SurfacePreview } from '../../lib/surface/preview'

export type ProblemFormat = 'text' | 'json' | 'github'
export const PROBLEM_FORMATS: readonly ProblemFormat[] = ['text', 'json', 'github']

/** `file:line:col: message` per problem, the file as the user wrote the directory. */
export function formatProblems(
  problems: readonly LayerProblem[],
  dirs: { target: string; context?: string },
  format: ProblemFormat,
): string {
  const fileOf = (p: LayerProblem) => join(p.layer === 'context' ? (dirs.context ?? '.') : dirs.target, p.path)
  if (format === 'json') {
    return JSON.stringify(
      { ok: !problems.some((p) => p.severity === 'error'), problems: problems.map((p) => ({ file: fileOf(p), ...p })) },
      null,
      2,
    )
  }
  if (format === 'github') {
    // https://docs.github.com/actions/reference/workflow-commands-for-github-actions#setting-an-error-message
    return problems
      .map((p) => {
        const props = [
          `file=${escapeProperty(fileOf(p))}`,
          ...(p.line !== undefined ? [`line=${p.line}`, `col=${p.column ?? 1}`] : []),
          `title=${escapeProperty('server-tools validate')}`,
        ]
        return `::${p.severity === 'error' ? 'error' : 'warning'} ${props.join(',')}::${escapeData(p.message)}`
      })
      .join('\n')
  }
  const lines = problems.map(
    (p) =>
      `${fileOf(p)}${p.line !== undefined ? `:${p.line}:${p.column ?? 1}` : ''}: ${p.severity === 'warning' ? 'warning: ' : ''}${p.message}`,
  )
  const errors = problems.filter((p) => p.severity === 'error').length
  const warnings = problems.length - errors
  lines.push(
    errors || warnings ? `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}` : 'no problems',
  )
  return lines.join('\n')
}

const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C')

const SIGN = { create: '+', update: '~', delete: '-', unchanged: '=' } as const

export function formatPlan(plan: Plan, opts: { showUnchanged?: boolean } = {}): string {
  const out: string[] = [`Layer '${plan.project}':`]
  for (const c of plan.changes) {
    if (c.kind === 'unchanged' && !opts.showUnchanged) continue
    out.push(`  ${SIGN[c.kind]} ${c.kind.padEnd(9)} ${c.path}${c.kind === 'create' ? '' : ` (version ${c.version})`}`)
    if (c.kind === 'update')
      out.push(
        ...c.diff
          .trimEnd()
          .split('\n')
          .map((l) => `      ${l}`),
      )
  }
  for (const path of plan.kept) out.push(`  ! not in the directory, kept (use --prune to delete): ${path}`)
  const n = countChanges(plan)
  out.push(`Plan: ${n.create} to create, ${n.update} to update, ${n.delete} to delete, ${n.unchanged} unchanged.`)
  return out.join('\n')
}

const deferredCount = (p: Record<string, any>) =>
  (p.families as { status: string; tools: string[] }[]).filter((f) => f.status === 'deferred').reduce((n, f) => n + f.tools.length, 0)

/** Families as a table, then budget, deferred tools and warnings. */
export function formatPreview(p: Record<string, any>): string {
  const rows: string[][] = [['FAMILY', 'STATUS', 'TIER', 'TOOLS']]
  for (const f of p.families as { family: string; status: string; tier: string; tools: string[] }[])
    rows.push([f.family, f.status, f.tier, f.tools.join(', ')])
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  const table = rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd(),
  )
  const b = p.manifest.budget
  const out = [
    `recipe ${p.recipe} · engine ${p.engine} · models ${p.models.length ? p.models.join(' → ') : '(none)'}`,
    '',
    ...table,
    '',
    `manifest: ${p.manifest.tools.length} tools · budget: limit ${b.limit ?? 'none'}, reserved ${b.reserved}, effective ${b.effective ?? 'none'}, demoted ${b.demoted}${b.demotedFamilies.length ? ` (${b.demotedFamilies.join(', ')})` : ''}`,
    `deferred by the recipe: ${p.deferredByRecipe.length ? p.deferredByRecipe.join(', ') : '(none)'} · deferred in all: ${deferredCount(p)}`,
  ]
  if (p.code) {
    const c = p.code as NonNullable<SurfacePreview['code']>
    const by = c.chosenBy === 'endpoint' ? "chosen by the model's endpoint profile" : 'chosen by the recipe'
    out.push(
      `code surface: ${c.declared.length} tools declared in execute_code · ${c.declarationBytes.toLocaleString('en-US')} of ${c.budgetBytes.toLocaleString('en-US')} bytes · about ${c.estimatedTokens.toLocaleString('en-US')} tokens · ${by}${c.overBudget.length ? ` · over the budget (${c.budgetBy}): ${c.overBudget.join(', ')}` : ''}`,
      '',
      c.declaration.trimEnd(),
    )
  }
  for (const w of p.warnings as string[]) out.push(`warning: ${w}`)
  return out.join('\n')
}

/** A one-line progress bar on a TTY; silent elsewhere (CI logs get the summary). */
export function progressBar(total: number, stream: NodeJS.WriteStream = process.stderr) {
  let done = 0
  const draw = (label: string) => {
    if (!stream.isTTY || total === 0) return
    const width = 24
    const filled = Math.round((done / total) * width)
    stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${label.slice(0, 60).padEnd(60)}`)
  }
  return {
    tick(label: string) {
      done++
      draw(label)
    },
    done() {
      if (stream.isTTY && total > 0) stream.write(`\r${' '.repeat(100)}\r`)
    },
  }
}
