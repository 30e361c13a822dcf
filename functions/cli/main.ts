/**
 * `server-tools`: configuration as code for one layer (a directory) — validate, plan, apply, pull —
 * plus preview and call for pipelines. A composition root: it reads the environment and the
 * file system, and leaves every judgement (schemas, plans, cross-document checks) to lib/.
 *
 * Exit codes: 0 success (plan: no changes), 1 problems or failure, 2 plan: changes pending or
 * live documents left behind. The layer commands name their layer explicitly (guards.ts).
 */
import { readFile, writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline/promises'
import { Command, Option } from 'commander'
import { isLayerPath, type LayerFile } from '../../lib/layers/layer'
import {
  type Change,
  countChanges,
  PLAN_FORMAT,
  type Plan,
  pendingChanges,
  planLayer,
  plannedVersion,
  staleChanges,
} from '../../lib/layers/plan'
import { sha256 } from '../../lib/runtime/hash'
import { ALL_SCOPES } from '../http/auth'
import { registerAuditCommand } from './audit'
import { ApiError, ServerToolsClient } from './client'
import {
  checkDeleteCount,
  checkDirectory,
  formatDangling,
  GuardFailure,
  type LayerOptions,
  PRUNE_THRESHOLD,
  parseCount,
  referencesToDeletes,
  targetLayer,
} from './guards'
import { readLayerDir } from './layer-dir'
import { formatPlan, formatPreview, formatProblems, PROBLEM_FORMATS, type ProblemFormat, progressBar } from './output'
import { pullInto, writeState } from './pull'
import { registerQuotasCommand } from './quotas'
import { mintToken, TokenRefusal } from './token'
import { registerUsageCommand } from './usage'

export interface CliIo {
  out: (text: string) => void
  err: (text: string) => void
  env: Record<string, string | undefined>
  /** Asks a yes/no question; undefined when nobody can answer (no TTY). */
  confirm?: (question: string) => Promise<boolean>
}

export const EXIT = { ok: 0, problems: 1, changes: 2 } as const

class CliFailure extends Error {
  constructor(
    message: string,
    readonly code: number = EXIT.problems,
  ) {
    super(message)
  }
}

interface Connection {
  url?: string
  token?: string
}

export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok
  const set = (c: number) => (code = c)
  const program = new Command('server-tools')
    .description(
      'Configuration as code for Server Tools: a directory is a layer (server-tools/, recipes/, engines/, models/, mcp-servers/, documents/, scripts/, egress/, quotas.yaml).',
    )
    .option('--url <url>', 'the tenant URL, …/brain/<tenant> (default: $ST_URL)')
    .option('--token <token>', 'a bearer token (default: $ST_TOKEN)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError()
  const client = (): ServerToolsClient => {
    const o = program.opts<Connection>()
    const url = o.url ?? io.env.ST_URL
    const token = o.token ?? io.env.ST_TOKEN
    if (!url || !token) throw new CliFailure('set --url and --token, or ST_URL and ST_TOKEN (npm start prints both)')
    return new ServerToolsClient(url, token)
  }
  const projectOption = () => new Option('--project <id>', "the layer: a project id, or '_tenant'").default('_tenant')
  /** The layer commands' target: never a default, so a missing flag cannot aim at the tenant layer. */
  const layerOptions = (cmd: Command) =>
    cmd
      .option('--project <id>', 'the target layer: a project')
      .option('--layer <id>', "the target layer: a project id, or '_tenant' for the tenant layer")
      .option('--ignore-dir-name', 'allow a directory named after (or last used for) another layer')
  const exists = (api: ServerToolsClient) => async (project: string) => (await api.listLayer(project)).length > 0

  layerOptions(
    program
      .command('validate <dir>')
      .description(
        'check a layer directory offline with the service’s own validators (the tenant layer unless one is named); exit 1 on any error',
      ),
  )
    .option('--tenant-dir <dir>', 'the tenant layer’s directory, to check a project layer against it')
    .addOption(new Option('--format <format>', 'text, json or github (Actions annotations)').choices(PROBLEM_FORMATS).default('text'))
    .action(async (dir: string, o: LayerOptions & { tenantDir?: string; format: ProblemFormat }) => {
      // offline and writing nothing: the tenant layer may stay implied here
      const layer = o.project === undefined && o.layer === undefined ? '_tenant' : targetLayer(o)
      await checkDirectory(dir, layer, o)
      const { problems } = await validated(dir, layer, o.tenantDir)
      io.out(formatProblems(problems, { target: dir, context: o.tenantDir }, o.format))
      set(problems.some((p) => p.severity === 'error') ? EXIT.problems : EXIT.ok)
    })

  layerOptions(
    program
      .command('plan <dir>')
      .description(
        'compare a layer directory with the live layer by content hash; exit 0 nothing to do, 2 changes or live documents left behind, 1 problems',
      ),
  )
    .option('--prune', 'delete live documents that have no file')
    .option(
      '--check-project <id...>',
      'projects whose documents may name what a prune of the tenant layer deletes (besides sibling directories)',
    )
    .option('--out <file>', 'save the plan (apply --plan applies exactly it)')
    .addOption(new Option('--format <format>', 'text or json').choices(['text', 'json']).default('text'))
    .action(async (dir: string, o: LayerOptions & { prune?: boolean; checkProject?: string[]; out?: string; format: 'text' | 'json' }) => {
      const api = client()
      const layer = targetLayer(o)
      await checkDirectory(dir, layer, o, exists(api))
      const files = await validFiles(dir, layer, api)
      const plan = planLayer(layer, files, await api.listLayer(layer, { bodies: true }), { prune: !!o.prune })
      if (o.out) await writeFile(o.out, `${JSON.stringify({ format: PLAN_FORMAT, ...plan }, null, 2)}\n`)
      io.out(o.format === 'json' ? JSON.stringify(plan, null, 2) : formatPlan(plan))
      const deletes = plan.changes.filter((c) => c.kind === 'delete')
      if (deletes.length) {
        const { dangling, checked } = await referencesToDeletes(api, dir, layer, files, deletes, o.checkProject ?? [])
        for (const line of formatDangling(dangling, checked)) io.err(line)
        if (deletes.length > PRUNE_THRESHOLD)
          io.err(`apply will need --expect-deletes ${deletes.length} (more than ${PRUNE_THRESHOLD} deletes).`)
      }
      // a file deleted without --prune leaves its document live: not "nothing to do"
      set(pendingChanges(plan).length || plan.kept.length ? EXIT.changes : EXIT.ok)
    })

  layerOptions(
    program.command('apply <dir>').description('validate everything, then write the plan with If-Match; a concurrent change stops it'),
  )
    .option('--prune', 'delete live documents that have no file')
    .option(
      '--expect-deletes <n>',
      `the number of documents the prune deletes; required above ${PRUNE_THRESHOLD}, and must match`,
      parseCount,
    )
    .option(
      '--check-project <id...>',
      'projects whose documents may name what a prune of the tenant layer deletes (besides sibling directories)',
    )
    .option('--plan <file>', 'apply a plan saved by plan --out (refused if the directory or the layer moved since)')
    .option('-y, --yes', 'delete without asking')
    .action(
      async (
        dir: string,
        o: LayerOptions & { prune?: boolean; expectDeletes?: number; checkProject?: string[]; plan?: string; yes?: boolean },
      ) => {
        const api = client()
        const layer = targetLayer(o)
        await checkDirectory(dir, layer, o, exists(api))
        const files = await validFiles(dir, layer, api)
        const plan = o.plan
          ? await savedPlan(o.plan, layer, files)
          : planLayer(layer, files, await api.listLayer(layer, { bodies: true }), { prune: !!o.prune })
        const pending = pendingChanges(plan)
        if (!pending.length) {
          await writeState(dir, { layer, files: Object.fromEntries(files.map((f) => [f.path, sha256(f.body)])) })
          io.out(`No changes: layer '${layer}' matches ${dir}.`)
          if (plan.kept.length) io.out(`Kept without a file (--prune deletes them): ${plan.kept.join(', ')}`)
          return
        }
        io.out(formatPlan(plan))
        // A stale plan stops before the first write: nothing is half-applied.
        const stale = staleChanges(plan, await api.listLayer(layer))
        if (stale.length) throw new CliFailure(conflictMessage(stale))
        const deletes = pending.filter((c) => c.kind === 'delete')
        if (deletes.length) {
          io.out(`Deletes ${deletes.length} document${deletes.length === 1 ? '' : 's'} from layer '${layer}':`)
          for (const c of deletes) io.out(`  - ${c.path}`)
          const { dangling, checked } = await referencesToDeletes(api, dir, layer, files, deletes, o.checkProject ?? [])
          for (const line of formatDangling(dangling, checked)) io.err(line)
          checkDeleteCount(deletes, o.expectDeletes, layer)
        } else if (o.expectDeletes !== undefined) checkDeleteCount(deletes, o.expectDeletes, layer)
        if (deletes.length && !o.yes) {
          const ok = io.confirm
            ? await io.confirm(`Delete ${deletes.length} document${deletes.length > 1 ? 's' : ''} from layer '${layer}'? [y/N] `)
            : undefined
          if (ok === undefined)
            throw new CliFailure(`the plan deletes ${deletes.length} document(s); pass --yes to confirm without a terminal`)
          if (!ok) throw new CliFailure('nothing applied')
        }
        await applyChanges(api, layer, files, pending)
        // the directory now matches the layer: a later pull may replace these files, and only these
        await writeState(dir, { layer, files: Object.fromEntries(files.map((f) => [f.path, sha256(f.body)])) })
      },
    )

  layerOptions(
    program
      .command('pull <dir>')
      .description(
        'export the live layer into a directory (then plan shows no changes); files edited since the last pull or apply are kept unless --force',
      ),
  )
    .option('--force', 'replace files edited since the last pull or apply')
    .action(async (dir: string, o: LayerOptions & { force?: boolean }) => {
      const api = client()
      const layer = targetLayer(o)
      await checkDirectory(dir, layer, o, exists(api))
      const docs = (await api.listLayer(layer, { bodies: true })).filter((d) => isLayerPath(d.path))
      const result = await pullInto(
        dir,
        layer,
        docs.map((d) => ({ path: d.path, body: d.body ?? '', sha256: d.sha256 })),
        { force: !!o.force },
      )
      const pulled = [...result.written, ...result.unchanged]
      const local = await readLayerDir(dir)
      const extra = local.files.filter((f) => !pulled.includes(f.path)).map((f) => f.path)
      io.out(
        `Pulled ${pulled.length} document${pulled.length === 1 ? '' : 's'} of layer '${layer}' into ${dir} (${result.written.length} written, ${result.unchanged.length} already equal).`,
      )
      if (extra.length) io.out(`Not in the layer (plan will create them, or delete them first): ${extra.join(', ')}`)
      if (result.refused.length) {
        for (const r of result.refused) io.err(`not written: ${r.path}: ${r.why}`)
        throw new CliFailure(`${result.refused.length} document${result.refused.length === 1 ? ' was' : 's were'} not pulled`)
      }
    })

  program
    .command('preview')
    .description('what a process spawned now would get: families, budget, demotions, deferred tools, warnings')
    .addOption(projectOption())
    .option('--recipe <name>', 'the recipe', 'default')
    .option('--engine <name>', 'override the recipe’s engine')
    .option('--model <instance/model...>', 'override the recipe’s model chain (primary first)')
    .option('--extra-tool <name...>', 'skill tools for the first turn')
    .option('--json', 'the whole answer as JSON')
    .action(async (o: { project: string; recipe: string; engine?: string; model?: string[]; extraTool?: string[]; json?: boolean }) => {
      const body = {
        recipe: o.recipe,
        ...(o.engine ? { engine: o.engine } : {}),
        ...(o.model ? { models: o.model } : {}),
        ...(o.extraTool ? { extraTools: o.extraTool } : {}),
      }
      const preview = await client().preview(o.project, body)
      io.out(o.json ? JSON.stringify(preview, null, 2) : formatPreview(preview))
    })

  program
    .command('call <tool>')
    .description('call one tool (a smoke test); exit 1 when the tool answers an error')
    .addOption(projectOption())
    .option('--params <json>', 'the arguments as a JSON object', '{}')
    .action(async (tool: string, o: { project: string; params: string }) => {
      let params: unknown
      try {
        params = JSON.parse(o.params)
      } catch (e) {
        throw new CliFailure(`--params is not JSON: ${(e as Error).message}`)
      }
      if (params === null || typeof params !== 'object' || Array.isArray(params)) throw new CliFailure('--params must be a JSON object')
      const outcome = await client().invoke(o.project, tool, params)
      io.out(JSON.stringify(outcome.content, null, 2))
      set(outcome.isError ? EXIT.problems : EXIT.ok)
    })

  registerAuditCommand(program, client, io.out)
  registerQuotasCommand(program, client, io.out)
  registerUsageCommand(program, client, io.out)

  program
    .command('token')
    .description(
      'mint an HS256 token with the local secret (DATA_DIR/jwt-secret or AUTH_JWT_SECRET); refused where an identity provider issues tokens',
    )
    .requiredOption('--tenant <tenant>', 'the tenant the token is for')
    .requiredOption('--scope <scopes...>', `one or more of ${ALL_SCOPES.join(', ')}`)
    .option('--ttl <duration>', 'lifetime: seconds, or 15m, 12h, 30d', '1h')
    .option('--subject <sub>', 'the sub claim, stamped into updatedBy of what the token writes', 'server-tools-token')
    .option('--data-dir <dir>', "npm start's data directory (default: $DATA_DIR or .data)")
    .option('--offline', 'do not ask the service at --url / $ST_URL whether it uses an identity provider')
    .action(async (o: { tenant: string; scope: string[]; ttl: string; subject: string; dataDir?: string; offline?: boolean }) => {
      const url = o.offline ? undefined : (program.opts<Connection>().url ?? io.env.ST_URL)
      try {
        const minted = await mintToken(
          {
            tenant: o.tenant,
            scopes: o.scope,
            ttl: o.ttl,
            subject: o.subject,
            ...(o.dataDir ? { dataDir: o.dataDir } : {}),
            ...(url ? { url } : {}),
          },
          io.env,
          { nowSeconds: Math.floor(Date.now() / 1000) },
        )
        io.out(minted.token)
        const { tenant, scope, exp } = minted.claims
        io.err(`tenant ${tenant}, scope "${scope}", expires ${new Date(exp * 1000).toISOString()}; signed with ${minted.secretSource}`)
      } catch (e) {
        if (e instanceof TokenRefusal) throw new CliFailure(e.message)
        throw e
      }
    })

  /** Reads and validates a directory (and the tenant layer as context); throws on errors. */
  async function validated(dir: string, project: string, tenantDir?: string, liveTenant?: LayerFile[]) {
    const local = await readLayerDir(dir)
    const tenantFiles = tenantDir ? (await readLayerDir(tenantDir)).files : liveTenant
    // the whole service in memory: loaded only by the commands that validate
    const { validateOffline } = await import('./offline')
    const problems = [
      ...local.problems,
      ...(await validateOffline({ project, files: local.files, ...(tenantFiles ? { tenantFiles } : {}) })),
    ]
    return { files: local.files, problems }
  }

  /** plan and apply check the directory first, against the live tenant layer when it is a project's. */
  async function validFiles(dir: string, project: string, api: ServerToolsClient): Promise<LayerFile[]> {
    const liveTenant =
      project === '_tenant'
        ? undefined
        : (await api.listLayer('_tenant', { bodies: true }))
            .filter((d) => isLayerPath(d.path))
            .map((d) => ({ path: d.path, body: d.body ?? '' }))
    const { files, problems } = await validated(dir, project, undefined, liveTenant)
    const errors = problems.filter((p) => p.severity === 'error')
    if (errors.length) {
      io.err(formatProblems(errors, { target: dir, context: '<live _tenant layer>' }, 'text'))
      throw new CliFailure(`${dir} has problems; nothing was planned or written`)
    }
    return files
  }

  async function savedPlan(file: string, project: string, files: readonly LayerFile[]): Promise<Plan> {
    const saved = JSON.parse(await readFile(file, 'utf8')) as Plan & { format?: string }
    if (saved.format !== PLAN_FORMAT || !Array.isArray(saved.changes))
      throw new CliFailure(`${file} is not a plan saved by 'server-tools plan --out'`)
    if (saved.project !== project) throw new CliFailure(`${file} is a plan for layer '${saved.project}', not '${project}'`)
    const local = new Map(files.map((f) => [f.path, sha256(f.body)]))
    const moved = saved.changes.filter((c) =>
      c.kind === 'create' || c.kind === 'update' ? local.get(c.path) !== c.sha256 : c.kind === 'delete' ? local.has(c.path) : false,
    )
    if (moved.length) throw new CliFailure(`the directory changed since the plan (${moved.map((c) => c.path).join(', ')}); run plan again`)
    return saved
  }

  async function applyChanges(api: ServerToolsClient, project: string, files: readonly LayerFile[], pending: Change[]) {
    const bodies = new Map(files.map((f) => [f.path, f.body]))
    const bar = progressBar(pending.length)
    const done: Change[] = []
    try {
      for (const c of pending) {
        if (c.kind === 'delete') await api.deleteDocument(project, c.path, c.version)
        else await api.putDocument(project, c.path, bodies.get(c.path)!, plannedVersion(c))
        done.push(c)
        bar.tick(c.path)
      }
    } catch (e) {
      bar.done()
      const failed = pending[done.length]
      io.err(summary('Applied before the failure', done))
      if (e instanceof ApiError && e.conflict)
        throw new CliFailure(`${conflictMessage([{ path: failed.path, planned: plannedVersion(failed) }])} (${e.message})`)
      if (e instanceof ApiError) {
        const details = (e.problem.errors ?? []).map(
          (i) => `  ${failed.path}${i.line !== undefined ? `:${i.line}:${i.column ?? 1}` : ''}: ${i.message}`,
        )
        throw new CliFailure([`${failed.path}: ${e.message}`, ...details].join('\n'))
      }
      throw e
    }
    bar.done()
    io.out(summary('Apply complete', done))
  }

  try {
    await program.parseAsync(argv, { from: 'user' })
    return code
  } catch (e) {
    if (e instanceof CliFailure || e instanceof GuardFailure) {
      io.err(`error: ${e.message}`)
      return e instanceof CliFailure ? e.code : EXIT.problems
    }
    if (e instanceof ApiError) {
      io.err(`error: ${e.message}`)
      for (const i of e.problem.errors ?? []) io.err(`  ${i.pointer ?? ''}${i.line !== undefined ? ` (line ${i.line})` : ''}: ${i.message}`)
      return EXIT.problems
    }
    const commanderExit = e as { code?: string; exitCode?: number }
    if (typeof commanderExit.code === 'string' && commanderExit.code.startsWith('commander.')) {
      return commanderExit.code === 'commander.helpDisplayed' || commanderExit.code === 'commander.version'
        ? EXIT.ok
        : (commanderExit.exitCode ?? EXIT.problems)
    }
    io.err(`error: ${(e as Error).message}`)
    return EXIT.problems
  }
}

function conflictMessage(stale: { path: string; planned?: number; now?: number }[]): string {
  const what = stale.map(
    (s) =>
      `${s.path} (planned against ${s.planned === undefined ? 'no document' : `version ${s.planned}`}, now ${s.now === undefined ? 'absent' : `version ${s.now}`})`,
  )
  return `conflict: the live layer changed since the plan — ${what.join('; ')}. Nothing further was written; run plan again.`
}

function summary(title: string, done: readonly Change[]): string {
  const n = countChanges({ project: '', prune: false, changes: [...done], kept: [] })
  return `${title}: ${n.create} created, ${n.update} updated, ${n.delete} deleted.`
}

/** The process entry (bin/server-tools.mjs). */
export async function main(): Promise<void> {
  const stdinTty = process.stdin.isTTY && process.stderr.isTTY
  const code = await run(process.argv.slice(2), {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    env: process.env,
    ...(stdinTty
      ? {
          confirm: async (q: string) => {
            const rl = createInterface({ input: process.stdin, output: process.stderr })
            try {
              return /^y(es)?$/i.test((await rl.question(q)).trim())
            } finally {
              rl.close()
            }
          },
        }
      : {}),
  })
  process.exitCode = code
}
