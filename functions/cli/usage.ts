/**
 * `server-tools usage`: what each role of a project called (GET …/insights/tool-usage), one line
 * per role and tool — calls, how many of them came from code, how many were refused — or JSON.
 * A module of its own, registered by main.ts.
 */
import type { Command } from 'commander'
import type { ServerToolsClient } from './client'

interface ToolRow {
  toolName: string
  calls: number
  codeCalls?: number
  refusals?: number
  discoveryHits: number
}

interface RoleRow {
  role: string
  calls: number
  codeCalls?: number
  refusals?: number
  tools: ToolRow[]
}

export function registerUsageCommand(program: Command, client: () => ServerToolsClient, out: (text: string) => void) {
  program
    .command('usage')
    .description('show what each role of a project called: calls, calls from code and refused calls per tool')
    .requiredOption('--project <id>', 'a project id')
    .option('--role <role>', 'one role only')
    .option('--days <n>', 'the window in days', '30')
    .option('--json', 'the answer as JSON')
    .action(async (o: { project: string; role?: string; days: string; json?: boolean }) => {
      const days = Number(o.days)
      if (!Number.isInteger(days) || days < 1) throw new Error(`--days must be a whole number of days, got '${o.days}'`)
      const roles = ((await client().usage(o.project, days)) as unknown as RoleRow[]).filter((r) => !o.role || r.role === o.role)
      if (o.json) return out(JSON.stringify(roles, null, 2))
      if (!roles.length) return out(`nothing recorded for ${o.project}${o.role ? ` under role ${o.role}` : ''}`)
      for (const line of formatUsage(roles)) out(line)
    })
}

/** One header line per role, then one line per tool that was called or refused (aligned names). */
export function formatUsage(roles: RoleRow[]): string[] {
  const lines: string[] = []
  for (const r of roles) {
    lines.push(`${r.role}: ${counts(r)}`)
    const tools = r.tools.filter((t) => t.calls > 0 || (t.refusals ?? 0) > 0)
    const width = Math.max(0, ...tools.map((t) => t.toolName.length))
    for (const t of tools) lines.push(`  ${t.toolName.padEnd(width)}  ${counts(t)}`)
  }
  return lines
}

const counts = (x: { calls: number; codeCalls?: number; refusals?: number }) =>
  `${x.calls} call${x.calls === 1 ? '' : 's'} (${x.codeCalls ?? 0} from code), ${x.refusals ?? 0} refused`
