/**
 * One validation path: a document of a known kind is judged by the same check whichever way it is
 * written — its admin route, the raw documents route, the CLI's apply — so the answers (422 and
 * the positions of every problem) cannot disagree, and nothing a route refuses can be stored by
 * another. The CLI runs in-process against the app served on 127.0.0.1.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../functions/cli/main'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { client, tokenFor } from '../support/http'

const work = mkdtempSync(join(tmpdir(), 'one-validation-path-'))
let api: ReturnType<typeof client>
let server: ReturnType<typeof serve>
let url: string
let token: string

beforeAll(async () => {
  const app = createApp(createMemoryDeps())
  token = await tokenFor('acme')
  api = client(app, token)
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => server.once('listening', () => r()))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/acme`
})

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()))
  rmSync(work, { recursive: true, force: true })
})

const base = (project: string) => `/brain/acme/projects/${project}`

/** One invalid document of each kind, in the layer it belongs to. */
const KINDS = [
  { kind: 'server tool', layer: 'p1', path: 'server-tools/lookup.yaml', body: 'type: doc_lookup\ndescription: x\nenabled: "yes"\n' },
  { kind: 'recipe', layer: 'p1', path: 'recipes/r.yaml', body: 'engine: default\nmodles: [openai/gpt-5.1]\n' },
  { kind: 'engine', layer: 'p1', path: 'engines/e.yaml', body: 'allowedTools: tool_list\n' },
  { kind: 'model provider', layer: 'p1', path: 'models/acme/_provider.yaml', body: 'wireType: openai\ntimeoutMs: 5\n' },
  { kind: 'model', layer: 'p1', path: 'models/acme/small.yaml', body: 'modelId: small-1\nmaxOutputTokens: 0\n' },
  { kind: 'MCP server', layer: 'p1', path: 'mcp-servers/s.yaml', body: 'url: 42\n' },
  { kind: 'allow-list', layer: '_tenant', path: 'egress/allow.yaml', body: 'hosts: ["*.*"]\n' },
] as const

type Problem = { pointer?: string; line?: number; column?: number; message: string }
const located = (errors: Problem[]) => errors.map(({ pointer, line, column, message }) => ({ pointer, line, column, message }))

async function cliApply(name: string, layer: string, files: Record<string, string>) {
  const dir = join(work, name)
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), body)
  }
  const err: string[] = []
  const code = await run(['apply', dir, layer === '_tenant' ? '--layer' : '--project', layer], {
    out: () => {},
    err: (t) => err.push(t),
    env: { ST_URL: url, ST_TOKEN: token },
  })
  return { code, stderr: err.join('\n'), dir }
}

describe('every write path judges a document of a known kind alike', () => {
  for (const k of KINDS) {
    it(`refuses an invalid ${k.kind} with the same 422 and positions through every path, and stores nothing`, async () => {
      const raw = await api.put(`${base(k.layer)}/documents/${k.path}`, k.body)
      expect(raw.status).toBe(422)
      const rawBody = await raw.json()
      expect(rawBody.code).toBe('INVALID_CONFIG')
      const errors = located(rawBody.errors)
      expect(errors.length).toBeGreaterThan(0)
      for (const e of errors) expect(e.line).toBeGreaterThan(0)

      if (k.kind === 'server tool') {
        const admin = await api.put(`${base(k.layer)}/server-tools/lookup`, k.body)
        expect(admin.status).toBe(422)
        const adminBody = await admin.json()
        expect(adminBody.code).toBe('INVALID_CONFIG')
        expect(located(adminBody.errors)).toEqual(errors)
      }

      const cli = await cliApply(`kind-${k.path.replace(/\W/g, '-')}`, k.layer, { [k.path]: k.body })
      expect(cli.code).toBe(1)
      for (const e of errors)
        expect(cli.stderr).toContain(`${join(cli.dir, k.path)}:${e.line}:${e.column}: ${e.message.replace(/ \(line \d+\)$/, '')}`)

      expect((await api.get(`${base(k.layer)}/documents/${k.path}`)).status).toBe(404)
    })
  }

  it("refuses through the raw route a broken copy of a tenant's tool, so the working tool stays what the project calls", async () => {
    const good = 'type: doc_lookup\ndescription: The wiki.\nparameters:\n  path: documents/getting-started.md\n'
    expect((await api.put(`${base('_tenant')}/server-tools/wiki`, good)).status).toBe(201)
    const broken = await api.put(`${base('p2')}/documents/server-tools/wiki.yaml`, 'type: doc_lookup\ndescription: 42\n')
    expect(broken.status).toBe(422)
    const view = await (await api.get(`${base('p2')}/server-tools/wiki`)).json()
    expect([view.source, view.description]).toEqual(['tenant', 'The wiki.'])
  })

  it('refuses through the raw route a tool document the admin route could not name: reserved, invalid or .yml', async () => {
    const body = 'type: doc_lookup\ndescription: hijack\nparameters:\n  path: documents/getting-started.md\n'
    for (const path of [
      'server-tools/tool_list.yaml',
      'server-tools/invoke_tool.yaml',
      'server-tools/Upper.yaml',
      'server-tools/a__b.yaml',
      'server-tools/x.yml',
    ]) {
      const res = await api.put(`${base('p3')}/documents/${path}`, body)
      expect(res.status, path).toBe(422)
    }
    expect((await (await api.get(`${base('p3')}/documents`)).json()).documents).toEqual([])
  })

  it('stores what is beside the tools and not a tool (notes, subfolders) as before', async () => {
    expect((await api.put(`${base('p4')}/documents/server-tools/README.md`, '# notes\n')).status).toBe(201)
    expect((await api.put(`${base('p4')}/documents/server-tools/specs/pets.yaml`, 'openapi: 3.0.3\n')).status).toBe(201)
  })

  it('accepts a valid tool through the raw route as the admin route would, and serves it', async () => {
    const body = 'type: doc_lookup\ndescription: Raw but valid.\nparameters:\n  path: documents/getting-started.md\n'
    expect((await api.put(`${base('p5')}/documents/server-tools/raw.yaml`, body)).status).toBe(201)
    expect((await (await api.get(`${base('p5')}/server-tools/raw`)).json()).description).toBe('Raw but valid.')
  })
})
