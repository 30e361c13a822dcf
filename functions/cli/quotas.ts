/**
 * `server-tools quotas`: the quota rules that apply to a project (GET /brain/<tenant>/quotas), one
 * line per window with its use and reset, or JSON. A module of its own, registered by main.ts.
 */
import type { Command } from 'commander'
import type { ServerToolsClient } from './client'

interface Window {
  kind: string
  limit: number
  used: number
  remaining: number
  resetsInSeconds: number
  refusedHere: number
}

interface Rule {
  layer: string
  index: number
  match: Record<string, string>
  rate?: { requests: number; per: string; burst?: number }
  volume?: { requests?: number; tokens?: number; per: string }
  windows: Window[]
}

export function registerQuotasCommand(program: Command, client: () => ServerToolsClient, out: (text: string) => void) {
  program
    .command('quotas')
    .description('show the quota rules that apply to a project: each window, its use and when it resets')
    .option('--project <id>', "a project id, or '_tenant'", '_tenant')
    .option('--json', 'the answer as JSON')
    .action(async (o: { project: string; json?: boolean }) => {
      const res = await client().quotas(o.project)
      if (o.json) return out(JSON.stringify(res, null, 2))
      const rules = res.rules as unknown as Rule[]
      if (!rules.length) return out(`no quota rules apply to ${res.project}`)
      for (const r of rules) for (const w of r.windows) out(formatWindow(r, w))
    })
}

export function formatWindow(r: Rule, w: Window): string {
  const where = `${r.layer === 'tenant' ? '_tenant' : r.layer}#${r.index + 1}`
  const match = Object.entries(r.match)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
  const per = w.kind === 'volume' || w.kind === 'tokens' ? r.volume?.per : w.kind === 'burst' ? 'burst' : r.rate?.per
  return `${where}  ${match || '(every call)'}  ${w.used}/${w.limit}${w.kind === 'tokens' ? ' tokens' : ''} per ${per}  ${w.remaining} left  resets in ${duration(w.resetsInSeconds)}${w.refusedHere ? `  ${w.refusedHere} refused here` : ''}`
}

function duration(s: number): string {
  if (s < 120) return `${s} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  return `${Math.round(s / 3600)} h`
}
