/**
 * The `server-tools` CLI as a pipeline runs it, against `npm start` (a child process), with the
 * ST_URL and ST_TOKEN it prints. Tests named "(the bin)" run bin/server-tools.mjs as a child
 * process; the rest call the function it calls, in this process (support/cli.ts says why).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../functions/cli/main'
import { runCli, runCliInProcess } from '../support/cli'
import { type LocalService, startLocalService } from '../support/npm-start'

const work = mkdtempSync(join(tmpdir(), 'server-tools-cli-'))
let service: LocalService

beforeAll(async () => {
  service = await startLocalService(join(work, 'data'))
}, 30_000)

afterAll(() => {
  if (service?.child.exitCode === null) service.child.kill('SIGKILL')
  rmSync(work, { recursive: true, force: true })
})

const cli = (...args: string[]) => runCliInProcess(service, ...args)
const bin = (...args: string[]) => runCli(service, ...args)

function layer(name: string, files: Record<string, string>): string {
  const dir = join(work, name)
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), body)
  }
  return dir
}

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${service.url}${path}`, { ...init, headers: { authorization: `Bearer ${service.token}`, ...(init.headers ?? {}) } }) as Promise<
    Omit<Response, 'json'> & { json(): Promise<any> }
  >

const handbook = (description: string) =>
  `type: doc_lookup\ndescription: ${description}\nlabels: [handbook]\nparameters:\n  path: documents/handbook.md\n`
const projectLayer = () => ({
  'server-tools/handbook.yaml': handbook('Read the team handbook.'),
  'server-tools/greet.yaml':
    'type: scripted\ndescription: Greet someone.\nparameters:\n  scriptPath: scripts/greet.js\n  inputs:\n    - { name: who, type: string }\n',
  'scripts/greet.js': '`hello ${who}`\n',
  'documents/handbook.md': '# Handbook\n\nBe kind.\n',
  'engines/helper.yaml': 'allowedTools: ["@handbook", greet]\n',
  'recipes/helper.yaml': 'engine: helper\nmodels: [openai/gpt-5.1]\n',
  'README.md': 'not part of the layer\n',
})

describe('server-tools validate (offline)', () => {
  it('reports each problem as file:line:col and exits 1 (the bin)', async () => {
    const dir = layer('broken', {
      'server-tools/bad.yaml':
        'type: doc_lookup\ndescription: x\nenabled: "yes"\nprimay: true\nparameters:\n  path: documents/getting-started.md\n',
      'recipes/r.yaml': 'engine: nope\n',
      'engines/e.yaml': 'allowedTools: [tool_list, "@nothing-has-this"]\n',
      'server-tools/script.yaml': 'type: scripted\ndescription: s\nparameters:\n  scriptPath: scripts/missing.js\n  inputs: []\n',
    })
    const run = await bin('validate', dir)
    expect(run.code).toBe(1)
    const lines = run.stdout.trim().split('\n')
    expect(lines).toContain(`${join(dir, 'server-tools/bad.yaml')}:3:10: enabled must be a boolean, got string`)
    expect(lines).toContain(`${join(dir, 'server-tools/bad.yaml')}:4:1: unknown field 'primay' — did you mean 'primary'?`)
    expect(lines).toContain(`${join(dir, 'recipes/r.yaml')}:1:9: recipe 'r' names unknown engine 'nope'`)
    expect(lines).toContain(
      `${join(dir, 'engines/e.yaml')}:1:27: engine e allowedTools: '@nothing-has-this' selects no tool now (label selectors are resolved once, at spawn)`,
    )
    expect(lines).toContain(
      `${join(dir, 'server-tools/script.yaml')}:4:15: the script 'scripts/missing.js' does not exist in this layer, an outer one or the bundled defaults`,
    )
    expect(lines.at(-1)).toBe('5 errors, 0 warnings')
  }, 120_000)

  it('writes GitHub Actions annotations with --format github, and JSON with --format json', async () => {
    const dir = layer('annotated', {
      'server-tools/bad.yaml':
        'type: doc_lookup\ndescription: "a, b: c"\nenabled: "yes"\nparameters:\n  path: documents/getting-started.md\n',
    })
    const github = await cli('validate', dir, '--format', 'github')
    expect(github.code).toBe(1)
    expect(github.stdout.trim()).toBe(
      `::error file=${join(dir, 'server-tools/bad.yaml')},line=3,col=10,title=server-tools validate::enabled must be a boolean, got string`,
    )
    const json = await cli('validate', dir, '--format', 'json')
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      problems: [
        {
          file: join(dir, 'server-tools/bad.yaml'),
          path: 'server-tools/bad.yaml',
          layer: 'target',
          line: 3,
          column: 10,
          message: 'enabled must be a boolean, got string',
          severity: 'error',
        },
      ],
    })
  }, 120_000)

  it('exits 0 for a valid layer', async () => {
    const run = await cli('validate', layer('valid', projectLayer()), '--project', 'p1')
    expect([run.code, run.stdout.trim()]).toEqual([0, 'no problems'])
  }, 120_000)
})

describe('server-tools plan, apply, pull', () => {
  it('plans, applies and pulls a layer; the round trip ends in an empty plan (the bin plans first)', async () => {
    const dir = layer('roundtrip', projectLayer())
    const first = await bin('plan', dir, '--project', 'p1')
    expect(first.code).toBe(2)
    expect(first.stdout).toContain('+ create    server-tools/handbook.yaml')
    expect(first.stdout).toContain('Plan: 6 to create, 0 to update, 0 to delete, 0 unchanged.')
    expect(first.stdout.indexOf('scripts/greet.js')).toBeLessThan(first.stdout.indexOf('server-tools/greet.yaml'))

    const applied = await cli('apply', dir, '--project', 'p1')
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toContain('Apply complete: 6 created, 0 updated, 0 deleted.')
    expect(
      await (
        await api('/projects/p1/tools/greet/invoke', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"params":{"who":"ada"}}',
        })
      ).json(),
    ).toMatchObject({ isError: false, content: { value: 'hello ada' } })
    expect((await cli('plan', dir, '--project', 'p1')).code).toBe(0)

    writeFileSync(join(dir, 'server-tools/handbook.yaml'), handbook('Read the handbook, kindly.'))
    const changed = await cli('plan', dir, '--project', 'p1')
    expect(changed.code).toBe(2)
    expect(changed.stdout).toContain('~ update    server-tools/handbook.yaml (version 1)')
    expect(changed.stdout).toContain('--- a/server-tools/handbook.yaml')
    expect(changed.stdout).toContain('-description: Read the team handbook.')
    expect(changed.stdout).toContain('+description: Read the handbook, kindly.')
    expect((await cli('apply', dir, '--project', 'p1')).code).toBe(0)

    const pulled = join(work, 'pulled')
    const pull = await cli('pull', pulled, '--project', 'p1')
    expect(pull.code, pull.stderr).toBe(0)
    expect(pull.stdout).toContain("Pulled 6 documents of layer 'p1'")
    expect(readFileSync(join(pulled, 'server-tools/handbook.yaml'), 'utf8')).toBe(handbook('Read the handbook, kindly.'))
    const again = await cli('plan', pulled, '--project', 'p1')
    expect([again.code, again.stdout.trim().split('\n').at(-1)]).toEqual([0, 'Plan: 0 to create, 0 to update, 0 to delete, 6 unchanged.'])
  }, 300_000)

  it('deletes live documents without a file only with --prune, and asks unless --yes', async () => {
    const dir = layer('prune', {
      'server-tools/keep.yaml': handbook('Keep me.'),
      'server-tools/drop.yaml': handbook('Drop me.'),
      'documents/handbook.md': '# H\n',
    })
    expect((await cli('apply', dir, '--project', 'p2')).code).toBe(0)
    unlinkSync(join(dir, 'server-tools/drop.yaml'))
    // a deletion-only plan: the document is left behind, which is not "nothing to do"
    const kept = await cli('plan', dir, '--project', 'p2')
    expect(kept.code).toBe(2)
    expect(kept.stdout).toContain('not in the directory, kept (use --prune to delete): server-tools/drop.yaml')
    const pruning = await cli('plan', dir, '--project', 'p2', '--prune')
    expect(pruning.code).toBe(2)
    expect(pruning.stdout).toContain('- delete    server-tools/drop.yaml (version 1)')
    const unconfirmed = await cli('apply', dir, '--project', 'p2', '--prune')
    expect(unconfirmed.code).toBe(1)
    expect(unconfirmed.stderr).toContain('pass --yes')
    expect((await api('/projects/p2/server-tools/drop')).status).toBe(200)
    const pruned = await cli('apply', dir, '--project', 'p2', '--prune', '--yes')
    expect(pruned.code, pruned.stderr).toBe(0)
    expect(pruned.stdout).toContain('Apply complete: 0 created, 0 updated, 1 deleted.')
    expect((await api('/projects/p2/server-tools/drop')).status).toBe(404)
    expect((await cli('plan', dir, '--project', 'p2', '--prune')).code).toBe(0)
  }, 300_000)

  it('asks before deleting on a terminal, and deletes nothing when the answer is no', async () => {
    const dir = layer('ask', { 'documents/a.md': 'a\n', 'documents/b.md': 'b\n' })
    expect((await cli('apply', dir, '--project', 'p7')).code).toBe(0)
    unlinkSync(join(dir, 'documents/b.md'))
    const questions: string[] = []
    const io = (answer: boolean) => ({
      out: () => {},
      err: () => {},
      env: { ST_URL: service.url, ST_TOKEN: service.token },
      confirm: async (q: string) => (questions.push(q), answer),
    })
    expect(await run(['apply', dir, '--project', 'p7', '--prune'], io(false))).toBe(1)
    expect(questions).toEqual(["Delete 1 document from layer 'p7'? [y/N] "])
    expect((await api('/projects/p7/documents/documents/b.md')).status).toBe(200)
    expect(await run(['apply', dir, '--project', 'p7', '--prune'], io(true))).toBe(0)
    expect((await api('/projects/p7/documents/documents/b.md')).status).toBe(404)
  }, 300_000)

  it('refuses to apply a plan when the layer changed after it, and writes nothing', async () => {
    const dir = layer('race', { 'server-tools/note.yaml': handbook('First.'), 'documents/handbook.md': '# H\n' })
    expect((await cli('apply', dir, '--project', 'p3')).code).toBe(0)
    writeFileSync(join(dir, 'server-tools/note.yaml'), handbook('Mine.'))
    writeFileSync(join(dir, 'documents/handbook.md'), '# H, edited\n')
    const planFile = join(work, 'race.plan.json')
    expect((await cli('plan', dir, '--project', 'p3', '--out', planFile)).code).toBe(2)

    const theirs = await api('/projects/p3/server-tools/note', {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml', 'if-match': '"1"' },
      body: handbook('Theirs.'),
    })
    expect(theirs.status).toBe(200)

    const refused = await cli('apply', dir, '--project', 'p3', '--plan', planFile)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(
      'conflict: the live layer changed since the plan — server-tools/note.yaml (planned against version 1, now version 2)',
    )
    expect((await (await api('/projects/p3/server-tools/note')).json()).description).toBe('Theirs.')
    expect(await (await api('/projects/p3/documents/documents/handbook.md')).text()).toBe('# H\n')
  }, 300_000)

  it('refuses a saved plan once the directory changed after it', async () => {
    const dir = layer('moved', { 'documents/a.md': 'a\n' })
    const planFile = join(work, 'moved.plan.json')
    expect((await cli('plan', dir, '--project', 'p4', '--out', planFile)).code).toBe(2)
    writeFileSync(join(dir, 'documents/a.md'), 'b\n')
    const refused = await cli('apply', dir, '--project', 'p4', '--plan', planFile)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('the directory changed since the plan (documents/a.md)')
  }, 120_000)

  it('validates before anything is planned or written', async () => {
    const dir = layer('invalid-apply', { 'documents/a.md': 'a\n', 'server-tools/bad.yaml': 'type: doc_lookup\n' })
    const run = await cli('apply', dir, '--project', 'p5')
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('server-tools/bad.yaml:1:1: description is required')
    expect((await (await api('/projects/p5/documents')).json()).documents).toEqual([])
  }, 120_000)
})

describe('the tenant layer', () => {
  it('applies the _tenant layer with its egress allow-list, and checks a project layer against it', async () => {
    const tenantDir = layer('tenant', {
      'server-tools/wiki.yaml': 'type: doc_lookup\ndescription: The wiki.\nlabels: [wiki]\nparameters:\n  path: documents/wiki.md\n',
      'documents/wiki.md': '# Wiki\n',
      'egress/allow.yaml': 'hosts: [intranet.example.com]\n',
    })
    const applied = await cli('apply', tenantDir, '--layer', '_tenant')
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toContain('Apply complete: 3 created, 0 updated, 0 deleted.')
    expect(await (await api('/projects/_tenant/documents/egress/allow.yaml')).text()).toBe('hosts: [intranet.example.com]\n')

    const projectDir = layer('uses-tenant', { 'recipes/wiki.yaml': 'engine: default\nallowedToolsAdd: ["@wiki"]\n' })
    const alone = await cli('validate', projectDir, '--project', 'p6')
    expect(alone.code).toBe(1)
    expect(alone.stdout).toContain("recipes/wiki.yaml:2:19: allowedToolsAdd: '@wiki' selects no tool now")
    expect((await cli('validate', projectDir, '--project', 'p6', '--tenant-dir', tenantDir)).code).toBe(0)
    const planned = await cli('plan', projectDir, '--project', 'p6')
    expect(planned.code, planned.stderr).toBe(2)
  }, 300_000)
})

describe('quotas.yaml as configuration', () => {
  const quotas =
    'rules:\n  - match: { tool: "handbook" }\n    rate: { requests: 10, per: minute }\n  - match: { type: prompt_template }\n    volume: { tokens: 200000, per: day }\n'

  it('validates quotas.yaml at the top of a layer with line and column, and names a misspelt one', async () => {
    const bad = layer('quotas-bad', { 'quotas.yaml': 'rules:\n  - match: { tol: handbook }\n    rate: { requests: 10, per: minute }\n' })
    const run = await cli('validate', bad, '--project', 'pq')
    expect(run.code).toBe(1)
    expect(run.stdout).toContain("quotas-bad/quotas.yaml:2:19: rules[0].match.tol is not allowed here — did you mean 'tool'?")
    const misspelt = layer('quotas-misspelt', { 'quota.yaml': quotas, 'notes.yaml': 'not part of the layer\n' })
    const named = await cli('validate', misspelt, '--project', 'pq')
    expect(named.code).toBe(1)
    expect(named.stdout).toContain("'quota.yaml' is not a layer document — did you mean 'quotas.yaml'?")
    expect(named.stdout).not.toContain('notes.yaml')
  }, 120_000)

  it('applies quotas.yaml so GET /quotas shows its rules, pulls it back to the top of the directory, and plans no change after', async () => {
    const dir = layer('pq', { ...projectLayer(), 'quotas.yaml': quotas })
    const applied = await cli('apply', dir, '--project', 'pq')
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toContain('Apply complete: 7 created, 0 updated, 0 deleted.')
    const { rules } = await (await api('/quotas?project=pq')).json()
    expect(rules.map((r: { layer: string; match: unknown }) => [r.layer, r.match])).toEqual([
      ['project', { tool: 'handbook' }],
      ['project', { type: 'prompt_template' }],
    ])
    const into = join(work, 'pq-pulled')
    const pulled = await cli('pull', into, '--project', 'pq', '--ignore-dir-name')
    expect(pulled.code, pulled.stderr).toBe(0)
    expect(readFileSync(join(into, 'quotas.yaml'), 'utf8')).toBe(quotas)
    const again = await cli('plan', into, '--project', 'pq', '--ignore-dir-name')
    expect([again.code, again.stdout.trim().split('\n').at(-1)]).toEqual([0, 'Plan: 0 to create, 0 to update, 0 to delete, 7 unchanged.'])
  }, 300_000)
})

describe('server-tools preview and call', () => {
  it('shows what a spawn would get as a table and as JSON', async () => {
    const table = await cli('preview', '--project', 'p1', '--recipe', 'helper')
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain('recipe helper · engine helper · models openai/gpt-5.1')
    expect(table.stdout).toMatch(/^FAMILY\s+STATUS\s+TIER\s+TOOLS$/m)
    expect(table.stdout).toMatch(/^tool_list\s+kept\s+floor\s+tool_list$/m)
    // a project's own tool ranks in the tier named for what it is, not for the code layer
    expect(table.stdout).toMatch(/^handbook\s+\S+\s+handwritten\s+handbook$/m)
    expect(table.stdout).not.toMatch(/\bbuiltin\b/)
    expect(table.stdout).toMatch(/^deferred by the recipe: .* · deferred in all: \d+$/m)
    const json = JSON.parse((await cli('preview', '--project', 'p1', '--recipe', 'helper', '--json')).stdout)
    expect(Array.isArray(json.deferredByRecipe)).toBe(true)
    expect(json.allowed).toEqual(['greet', 'handbook'])
    expect(json.provenance.handbook).toEqual({ source: 'project', shadows: [] })
    const unknown = await cli('preview', '--project', 'p1', '--recipe', 'nope')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("unknown recipe 'nope'")
  }, 120_000)

  it('calls one tool and exits 1 when the tool answers an error (the bin)', async () => {
    const ok = await bin('call', 'greet', '--project', 'p1', '--params', '{"who":"grace"}')
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ value: 'hello grace' })
    const bad = await bin('call', 'greet', '--project', 'p1', '--params', '{"who":7}')
    expect(bad.code).toBe(1)
    expect((await cli('call', 'greet', '--params', 'nope')).code).toBe(1)
  }, 120_000)

  it('says where the connection comes from when it is missing (the bin)', async () => {
    const { code, stderr } = await runCli({ url: '', token: '' }, 'plan', work)
    expect(code).toBe(1)
    expect(stderr).toContain('set --url and --token, or ST_URL and ST_TOKEN')
  }, 30_000)
})

describe('the CLI protects the tenant', () => {
  const layerPaths = async (layer: string) =>
    ((await (await api(`/projects/${layer}/documents`)).json()).documents as { path: string }[]).map((d) => d.path)

  it('refuses a directory named after a project aimed at another layer, and a layer left unnamed', async () => {
    const tenantDocs = { 'documents/t1.md': 't1\n', 'documents/t2.md': 't2\n' }
    const root = join(work, 'config-a')
    layer('config-a/_tenant', tenantDocs)
    expect((await cli('apply', join(root, '_tenant'), '--layer', '_tenant')).code).toBe(0)
    const project = layer('config-a/pa', { 'documents/a.md': 'a\n' })
    expect((await cli('apply', project, '--project', 'pa')).code).toBe(0)
    const before = await layerPaths('_tenant')

    const unnamed = await cli('plan', project, '--prune')
    expect([unnamed.code, unnamed.stderr.trim()]).toEqual([
      1,
      'error: name the layer: --project <id> for a project, or --layer _tenant for the tenant layer',
    ])
    // a fresh checkout (no state file) is known by its name alone
    const checkout = layer('checkout/pa', { 'documents/a.md': 'a\n' })
    const wrong = await cli('apply', checkout, '--layer', '_tenant', '--prune', '--yes')
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain(`${checkout} is named after layer 'pa', but the target is layer '_tenant'; pass --project pa`)
    const applied = await cli('apply', project, '--layer', '_tenant', '--prune', '--yes')
    expect(applied.stderr).toContain(`${project} was last pulled from or applied to layer 'pa'`)
    const tenantByProject = await cli('plan', join(root, '_tenant'), '--project', '_tenant')
    expect(tenantByProject.stderr).toContain('name it with --layer _tenant, not --project')
    const tenantDirAtProject = await cli('plan', layer('checkout/_tenant', tenantDocs), '--project', 'pa')
    expect(tenantDirAtProject.code).toBe(1)
    expect(tenantDirAtProject.stderr).toContain("is named after layer '_tenant', but the target is layer 'pa'; pass --layer _tenant")
    // a directory applied to one layer carries it in its state file, whatever its name
    const renamed = join(work, 'config-a-renamed')
    layer('config-a-renamed', { 'documents/a.md': 'a\n' })
    expect((await cli('apply', renamed, '--project', 'pa')).code).toBe(0)
    const elsewhere = await cli('plan', renamed, '--project', 'pb')
    expect(elsewhere.code).toBe(1)
    expect(elsewhere.stderr).toContain("was last pulled from or applied to layer 'pa'")
    expect(await layerPaths('_tenant')).toEqual(before)
  }, 300_000)

  it('refuses a prune over the threshold until --expect-deletes states the count, listing what it deletes', async () => {
    const files = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`documents/d${i}.md`, `d${i}\n`]))
    const dir = layer('pt', files)
    expect((await cli('apply', dir, '--project', 'pt')).code).toBe(0)
    for (let i = 1; i < 7; i++) unlinkSync(join(dir, `documents/d${i}.md`))
    const refused = await cli('apply', dir, '--project', 'pt', '--prune', '--yes')
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain("Deletes 6 documents from layer 'pt':\n  - documents/d6.md")
    expect(refused.stderr).toContain('nothing applied — check the list, then pass --expect-deletes 6')
    expect(await layerPaths('pt')).toHaveLength(7)
    const miscounted = await cli('apply', dir, '--project', 'pt', '--prune', '--yes', '--expect-deletes', '5')
    expect(miscounted.stderr).toContain("the plan deletes 6 documents from layer 'pt', not the 5 --expect-deletes says")
    expect(await layerPaths('pt')).toHaveLength(7)
    const counted = await cli('apply', dir, '--project', 'pt', '--prune', '--yes', '--expect-deletes', '6')
    expect(counted.code, counted.stderr).toBe(0)
    expect(await layerPaths('pt')).toEqual(['documents/d0.md'])
  }, 300_000)

  it('warns when a recipe in another project still names a tenant tool that a prune deletes, unless a bundled default takes its place', async () => {
    const tool = 'type: doc_lookup\ndescription: The intranet.\nparameters:\n  path: documents/intranet.md\n'
    const override = 'type: doc_lookup\ndescription: Our errors.\nparameters:\n  path: documents/intranet.md\n'
    const tenantDir = layer('config-r/_tenant', {
      'server-tools/intranet.yaml': tool,
      'server-tools/doc_errors.yaml': override,
      'documents/intranet.md': '# I\n',
    })
    expect((await cli('apply', tenantDir, '--layer', '_tenant')).code).toBe(0)
    const projectDir = layer('config-r/pr', { 'recipes/r.yaml': 'engine: default\nallowedToolsAdd: [intranet, doc_errors]\n' })
    expect((await cli('apply', projectDir, '--project', 'pr')).code).toBe(0)
    unlinkSync(join(tenantDir, 'server-tools/intranet.yaml'))
    unlinkSync(join(tenantDir, 'server-tools/doc_errors.yaml'))
    const plan = await cli('plan', tenantDir, '--layer', '_tenant', '--prune')
    expect(plan.code).toBe(2)
    expect(plan.stderr).toContain(
      "warning: server-tools/intranet.yaml is still named by recipes/r.yaml (/allowedToolsAdd/0) in layer 'pr'; it will not resolve there once deleted",
    )
    expect(plan.stdout).toContain('- delete    server-tools/doc_errors.yaml')
    expect(plan.stderr).not.toContain('doc_errors.yaml is still named')
    expect(plan.stderr).toMatch(/References checked in layers: _tenant, .*\bpr\b/)
  }, 300_000)

  it('keeps a file edited since the last pull unless --force, and replaces an unedited one', async () => {
    const dir = layer('pe', { 'documents/a.md': 'one\n', 'documents/b.md': 'bee\n' })
    expect((await cli('apply', dir, '--project', 'pe')).code).toBe(0)
    const pulled = join(work, 'pe-pulled', 'pe')
    expect((await cli('pull', pulled, '--project', 'pe')).code).toBe(0)
    writeFileSync(join(pulled, 'documents/a.md'), 'my unsaved work\n')
    await api('/projects/pe/documents/documents/a.md', { method: 'PUT', headers: { 'content-type': 'text/markdown' }, body: 'two\n' })
    await api('/projects/pe/documents/documents/b.md', { method: 'PUT', headers: { 'content-type': 'text/markdown' }, body: 'bee 2\n' })
    const again = await cli('pull', pulled, '--project', 'pe')
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('not written: documents/a.md: edited since the last pull or apply (--force replaces it)')
    expect(readFileSync(join(pulled, 'documents/a.md'), 'utf8')).toBe('my unsaved work\n')
    expect(readFileSync(join(pulled, 'documents/b.md'), 'utf8')).toBe('bee 2\n')
    const stranger = layer('pe-other/pe', { 'documents/a.md': 'written by hand\n' })
    const first = await cli('pull', stranger, '--project', 'pe')
    expect(first.stderr).toContain('not written: documents/a.md: exists and was not written by a pull or apply')
    const forced = await cli('pull', pulled, '--project', 'pe', '--force')
    expect(forced.code, forced.stderr).toBe(0)
    expect(readFileSync(join(pulled, 'documents/a.md'), 'utf8')).toBe('two\n')
  }, 300_000)

  it('never follows a symlinked directory or file, in pull or in plan', async () => {
    const dir = layer('ps', { 'server-tools/ps-tool.yaml': handbook('Linked.'), 'documents/handbook.md': '# H\n' })
    expect((await cli('apply', dir, '--project', 'ps')).code).toBe(0)
    const outside = layer('outside', { 'keep.txt': 'untouched\n', 'handbook.md': 'outside file\n' })
    const target = join(work, 'ps-linked', 'ps')
    mkdirSync(join(target, 'documents'), { recursive: true })
    symlinkSync(outside, join(target, 'server-tools'))
    symlinkSync(join(outside, 'handbook.md'), join(target, 'documents/handbook.md'))
    const pull = await cli('pull', target, '--project', 'ps', '--force')
    expect(pull.code).toBe(1)
    expect(pull.stderr).toContain("not written: server-tools/ps-tool.yaml: 'server-tools' is a symbolic link (not followed)")
    expect(pull.stderr).toContain('not written: documents/handbook.md: is a symbolic link (not followed)')
    expect(existsSync(join(outside, 'ps-tool.yaml'))).toBe(false)
    expect(readFileSync(join(outside, 'handbook.md'), 'utf8')).toBe('outside file\n')

    // read for a plan, a linked folder is an error, not a folder quietly missing (which a prune would empty)
    const plan = await cli('plan', target, '--project', 'ps', '--prune')
    expect(plan.code).toBe(1)
    expect(plan.stderr).toContain(`${join(target, 'server-tools')}/: a symbolic link; layer directories are read without following links`)
    expect(plan.stderr).toContain(`${join(target, 'documents/handbook.md')}: a symbolic link`)
    expect(await layerPaths('ps')).toHaveLength(2)
  }, 300_000)
})
