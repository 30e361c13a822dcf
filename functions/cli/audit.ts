/**
 * `server-tools audit`: the tenant's audit log (GET /brain/<tenant>/audit), newest first, as lines
 * or JSON. A module of its own, registered by main.ts; it reads and never writes.
 */
import type { Command } from 'commander'
import type { ServerToolsClient } from './client'

interface AuditOptions {
  from?: string
  to?: string
  actor?: string
  action?: string
  target?: string
  limit: string
  pages: string
  json?: boolean
}

interface Entry {
  at?: string
  actor?: { subject?: string; issuer?: string }
  action?: string
  target?: string
  outcome?: string
  status?: number
  reason?: string
  versionBefore?: string
  versionAfter?: string
  client?: string
  sourceAddress?: string
  repeated?: number
  firstAt?: string
  lastAt?: string
}

export function registerAuditCommand(program: Command, client: () => ServerToolsClient, out: (text: string) => void) {
  program
    .command('audit')
    .description('show the audit log (needs the audit:read or tenant:admin scope): every write and every refusal, newest first')
    .option('--from <time>', 'earliest, ISO-8601 UTC (2026-05-01 or 2026-05-01T10:00:00Z)')
    .option('--to <time>', 'latest, ISO-8601 UTC (a bare date: the whole day)')
    .option('--actor <sub>', "the token subject ('sub') who acted")
    .option('--action <action>', "an action (document.put), or a prefix ending in '.' (secret.)")
    .option('--target <target>', "a target (projects/p1/documents/a.yaml), or a prefix ending in '/'")
    .option('--limit <n>', 'entries per page (1–200)', '50')
    .option('--pages <n>', 'pages to follow at most', '1')
    .option('--json', 'one JSON object per entry, per line')
    .action(async (o: AuditOptions) => {
      const query: Record<string, string> = { limit: o.limit }
      for (const key of ['from', 'to', 'actor', 'action', 'target'] as const) if (o[key] !== undefined) query[key] = o[key]!
      const api = client()
      const pages = Math.max(1, Math.min(100, Number(o.pages) || 1))
      let more: string | undefined
      for (let page = 0; page < pages; page++) {
        const res = await api.auditPage(more ? { ...query, cursor: more } : query)
        for (const e of res.entries as Entry[]) out(o.json ? JSON.stringify(e) : formatEntry(e))
        more = res.next
        if (!more) break
      }
      if (more && !o.json) out(`… more: --pages ${pages + 1} (or narrow with --from/--to)`)
    })
}

export function formatEntry(e: Entry): string {
  const versions = e.versionBefore || e.versionAfter ? ` v${e.versionBefore ?? '-'}→${e.versionAfter ?? '-'}` : ''
  const why = e.reason ? ` (${e.reason})` : ''
  // a digest: one line for many refusals of one kind (lib/audit/refusal-digest.ts)
  const times = e.repeated ? ` ×${e.repeated} from ${e.firstAt ?? '?'} to ${e.lastAt ?? '?'}` : ''
  const who = e.actor?.subject ?? '(no valid token)'
  const from = [e.client, e.sourceAddress].filter(Boolean).join(' ')
  return `${e.at ?? ''}  ${who}  ${e.action ?? ''}  ${e.target ?? ''}  ${e.outcome ?? ''}${e.status ? ` ${e.status}` : ''}${why}${times}${versions}${from ? `  [${from}]` : ''}`
}
