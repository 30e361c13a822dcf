/**
 * Issue 21, the lower findings N9 N11 N12 N13 N14 and the info items: for each, the row as the
 * issue found it and three variants the issue does not name, against `npm start`'s app while the
 * bystander calls `whoami`. Every row asserts on answers and counts (statuses, what a body holds,
 * how many issues a list names), never on a timing.
 *
 * The app runs with EGRESS_ALLOW_HOSTS=127.0.0.1 so a rest tool can reach the echo server this
 * file starts on 127.0.0.1 (the N11 rows: a server that echoes the secret it was sent, spelled
 * the ways a client would unwrap), and with a small spawn burst so the spawn-cap row is short.
 */
import assert from 'node:assert/strict'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { HostileApp, HostileRowSet } from '../harness'

const YAML = { 'content-type': 'application/yaml' }
const T = 'lowerrows'
const P = '/projects/p1'
const SPAWN_BURST = 40

/** A request as `sub` of tenant T (a second subject of the same tenant: another agent, another user). */
async function as(app: HostileApp, sub: string, method: string, path: string, body?: unknown, scope?: string) {
  const token = await app.token(T, scope, sub)
  return app.call(T, method, path, body, { authorization: `Bearer ${token}` })
}

async function spawn(app: HostileApp, sub: string, body: Record<string, unknown> = {}) {
  const res = await as(app, sub, 'POST', `${P}/processes`, body)
  const json = (await res.json()) as { id: string; warnings: string[] }
  assert.equal(res.status, 201, JSON.stringify(json))
  return json
}

const statusOf = async (res: Response) => {
  await res.arrayBuffer()
  return res.status
}

// ───────────── the echo server (N11) ─────────────

let echo: Promise<string> | undefined
/**
 * GET /echo?form=<name>&t=<secret> answers the secret it received, spelled as <name> says.
 * Started once, on 127.0.0.1, unref'd (the test process does not wait for it).
 */
function echoBase(): Promise<string> {
  echo ??= new Promise((resolve) => {
    const server: Server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const got = url.searchParams.get('t') ?? ''
      const forms: Record<string, () => string> = {
        jsonInJson: () => JSON.stringify({ outer: JSON.stringify({ inner: JSON.stringify({ token: got }) }) }),
        htmlPerChar: () => JSON.stringify({ html: `<p>${[...got].map((c) => `&#${c.codePointAt(0)};`).join('')}</p>` }),
        percentThrice: () =>
          `token=${encodeURIComponent(encodeURIComponent(encodeURIComponent(got))).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`,
        upperUtf8: () => `token=${encodeURIComponent(got.toUpperCase())}`,
      }
      const body = (forms[url.searchParams.get('form') ?? ''] ?? (() => got))()
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(body)
    })
    server.listen(0, '127.0.0.1', () => {
      server.unref()
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    })
  })
  return echo
}

/** Stores the secret, a rest tool that sends it and asks the echo server for `form`; answers the tool's result. */
async function echoed(app: HostileApp, secret: string, form: string) {
  const put = await app.call(T, 'PUT', '/secrets/ECHO_TOKEN', { value: secret })
  assert.ok([200, 201].includes(put.status), await put.text())
  const name = `echo_${form.toLowerCase()}`
  const doc =
    `type: rest\ndescription: Echoes its token as ${form}.\nparameters:\n  url: ${await echoBase()}/echo\n` +
    `  query: { form: ${form}, t: "\${secret:ECHO_TOKEN}" }\n`
  assert.ok([200, 201].includes((await app.call(T, 'PUT', `${P}/server-tools/${name}`, doc, YAML)).status))
  const res = await app.call(T, 'POST', `${P}/tools/${name}/invoke`, { params: {} })
  assert.equal(res.status, 200)
  return JSON.stringify(await res.json())
}

function assertScrubbed(out: string, secret: string) {
  assert.ok(out.includes('[redacted secret:ECHO_TOKEN]'), out.slice(0, 400))
  const lower = out.toLowerCase()
  // no spelling the row used survives: the raw value, its characters' codes or escapes in a row
  assert.ok(!lower.includes(secret.toLowerCase()), out.slice(0, 400))
  assert.ok(!out.includes(`&#${secret.codePointAt(0)};&#${secret.codePointAt(1)};`), out.slice(0, 400))
  assert.ok(!lower.includes(encodeURIComponent(secret.slice(0, 6)).toLowerCase().replace(/%/g, '%25')), out.slice(0, 400))
}

// ───────────── client tools (N12, N14) ─────────────

const clientTool = (name: string, description = `The ${name} tool.`, inputSchema: Record<string, unknown> = { type: 'object' }) => ({
  name,
  description,
  inputSchema,
})

const TAGS = String.fromCodePoint(0xe0049, 0xe0067, 0xe006e, 0xe006f, 0xe0072, 0xe0065) // "Ignore", invisible

async function declare(app: HostileApp, clientTools: unknown[]) {
  const res = await app.call(T, 'POST', `${P}/processes`, { clientTools })
  return { status: res.status, body: (await res.json()) as { detail?: string; errors?: { pointer?: string; message: string }[] } }
}

async function manifestNames(app: HostileApp, id: string): Promise<string[]> {
  const res = await app.call(T, 'GET', `${P}/processes/${id}/manifest`)
  assert.equal(res.status, 200)
  return ((await res.json()) as { tools: { name: string }[] }).tools.map((t) => t.name)
}

// ───────────── the rows ─────────────

export const rowSet: HostileRowSet = {
  name: 'lower findings (issue 21 N9 N11 N12 N13 N14, info)',
  env: { EGRESS_ALLOW_HOSTS: '127.0.0.1', PROCESS_SPAWN_BURST: String(SPAWN_BURST), PROCESS_SPAWNS_PER_MINUTE: '60' },
  rows: [
    // N9: a process answers only the subject that spawned it
    {
      name: 'N9: another subject of the tenant gets 404 from GET, manifest, tool-calls and client-tools of a process; the owner 200',
      async run(app) {
        const { id } = await spawn(app, 'alice')
        const routes: [string, string, unknown?][] = [
          ['GET', `${P}/processes/${id}`],
          ['GET', `${P}/processes/${id}/manifest`],
          ['POST', `${P}/processes/${id}/tool-calls`, { name: 'whoami', params: {} }],
          ['PUT', `${P}/processes/${id}/client-tools`, { clientTools: [clientTool('notify')] }],
        ]
        for (const [method, path, body] of routes) {
          assert.equal(await statusOf(await as(app, 'mallory', method, path, body)), 404, `${method} ${path} as mallory`)
          assert.equal(await statusOf(await as(app, 'alice', method, path, body)), 200, `${method} ${path} as alice`)
        }
      },
    },
    {
      name: 'N9 variant: a subject that differs only in case, or by a trailing space, is another subject',
      async run(app) {
        const { id } = await spawn(app, 'Service-Account-7')
        for (const sub of ['service-account-7', 'SERVICE-ACCOUNT-7', 'Service-Account-7 '])
          assert.equal(await statusOf(await as(app, sub, 'GET', `${P}/processes/${id}`)), 404, sub)
        assert.equal(await statusOf(await as(app, 'Service-Account-7', 'GET', `${P}/processes/${id}`)), 200)
      },
    },
    {
      name: 'N9 variant: the diagnostics route and the process MCP endpoint hold the same binding; tenant:admin does not lift it',
      async run(app) {
        const { id } = await spawn(app, 'alice')
        const diag = await as(app, 'root', 'POST', `${P}/processes/${id}/diagnostics/empty-response`, { messages: [] })
        assert.equal(await statusOf(diag), 404)
        const mcp = await as(app, 'root', 'POST', `${P}/processes/${id}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
        assert.equal(await statusOf(mcp), 404)
        const own = await as(app, 'alice', 'POST', `${P}/processes/${id}/diagnostics/empty-response`, { messages: [] })
        assert.equal(await statusOf(own), 200)
      },
    },
    {
      name: "N9 variant: another subject's process id answers exactly what an id that never existed answers (no probing)",
      async run(app) {
        const { id } = await spawn(app, 'alice')
        const made = id.replace(/[0-9a-f]/g, (c) => (c === 'a' ? 'b' : 'a'))
        const theirs = await as(app, 'mallory', 'GET', `${P}/processes/${id}`)
        const never = await as(app, 'mallory', 'GET', `${P}/processes/${made}`)
        const a = (await theirs.json()) as { detail: string; code: string }
        const b = (await never.json()) as { detail: string; code: string }
        assert.deepEqual([theirs.status, a.code, a.detail.replace(id, 'ID')], [never.status, b.code, b.detail.replace(made, 'ID')])
      },
    },

    // N11: scrubbing decodes the layers a client would
    {
      name: 'N11: a secret echoed as JSON inside JSON inside JSON comes back redacted',
      async run(app) {
        assertScrubbed(await echoed(app, 'Bearer tok-"q"-9f3a-layered', 'jsonInJson'), 'tok-"q"-9f3a-layered')
      },
    },
    {
      name: 'N11 variant: a secret echoed one HTML character reference per character, inside JSON',
      async run(app) {
        assertScrubbed(await echoed(app, 'sk-live-77aa-html-refs', 'htmlPerChar'), 'sk-live-77aa-html-refs')
      },
    },
    {
      name: 'N11 variant: a secret percent-encoded three times, in lower-case hex',
      async run(app) {
        assertScrubbed(await echoed(app, 'key/with spaces&=+3x', 'percentThrice'), 'key/with spaces&=+3x')
      },
    },
    {
      name: 'N11 variant: a non-ASCII secret echoed upper-cased and percent-encoded as UTF-8',
      async run(app) {
        const out = await echoed(app, 'σκληρό-пароль-élan-42', 'upperUtf8')
        assert.ok(out.includes('[redacted secret:ECHO_TOKEN]'), out)
        assert.ok(!out.includes(encodeURIComponent('ΣΚΛΗΡΌ')), out)
        assert.ok(!out.includes('%D0%9F%D0%90%D0%A0'), out) // ПАР
      },
    },

    // N12: one text-hygiene rule wherever text enters
    {
      name: 'N12: client tools with NUL, a right-to-left override or tag characters in a description are refused (400)',
      async run(app) {
        for (const [bad, what] of [
          ['Sends\u0000mail.', 'U+0000'],
          ['Sends \u202Eliam\u202C.', 'U+202E'],
          [`Sends mail.${TAGS}`, 'U+E0049'],
        ]) {
          const { status, body } = await declare(app, [clientTool('notify', bad)])
          assert.equal(status, 400, bad)
          assert.ok(JSON.stringify(body).includes(what), JSON.stringify(body))
          assert.equal(body.errors?.[0]?.pointer, '/clientTools/0/description')
        }
      },
    },
    {
      name: 'N12 variant: tag characters in a property description deep in a client tool schema are refused with its pointer',
      async run(app) {
        const schema = {
          type: 'object',
          properties: { to: { type: 'object', properties: { addr: { type: 'string', description: `Address${TAGS}` } } } },
        }
        const { status, body } = await declare(app, [clientTool('notify', 'Sends mail.', schema)])
        assert.equal(status, 400)
        assert.equal(body.errors?.[0]?.pointer, '/clientTools/0/inputSchema/properties/to/properties/addr/description')
      },
    },
    {
      name: 'N12 variant: a bidi isolate in a property name of a client tool schema is refused',
      async run(app) {
        const schema = { type: 'object', properties: { ['amount\u2067']: { type: 'number' } } }
        const { status, body } = await declare(app, [clientTool('pay', 'Pays.', schema)])
        assert.equal(status, 400)
        assert.match(JSON.stringify(body), /U\+2067/)
      },
    },
    {
      name: 'N12 variant: a server tool and a recipe document with tag characters are refused on write, and list nothing',
      async run(app) {
        const tool = `type: doc_lookup\ndescription: "Reads docs.${TAGS}"\nparameters:\n  path: documents/getting-started.md\n`
        const put = await app.call(T, 'PUT', `${P}/server-tools/tagged`, tool, YAML)
        assert.ok(put.status === 400 || put.status === 422, String(put.status))
        assert.match(await put.text(), /U\+E0049/)
        const recipe = `engine: default\ndescription: "Chat${TAGS}"\n`
        const rec = await app.call(T, 'PUT', `${P}/documents/recipes/tagged.yaml`, recipe, YAML)
        assert.ok(rec.status === 400 || rec.status === 422, String(rec.status))
        assert.equal((await app.call(T, 'GET', `${P}/server-tools/tagged`)).status, 404)
      },
    },

    // N13: no 500 from any tenant input
    {
      name: 'N13: requestedToolCount 2^53 + 2 is a 400; an unconditional DELETE racing PUTs answers 200/204/404, never 412 or 500',
      async run(app) {
        const obs = { instance: 'openai', model: 'gpt-4o', errorMessage: 'too many tools', requestedToolCount: 2 ** 53 + 2 }
        assert.equal(await statusOf(await app.call(T, 'POST', '/models/observed-limits', obs)), 400)
        const doc = 'type: doc_lookup\ndescription: Raced.\nparameters:\n  path: documents/getting-started.md\n'
        const statuses = new Map<number, number>()
        const note = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1)
        for (let round = 0; round < 20; round++) {
          const work = [
            ...Array.from({ length: 4 }, () => app.call(T, 'PUT', `${P}/server-tools/raced`, doc, YAML)),
            ...Array.from({ length: 4 }, () => app.call(T, 'DELETE', `${P}/server-tools/raced`)),
          ]
          for (const s of await Promise.all(work.map(async (r) => statusOf(await r)))) note(s)
        }
        for (const s of statuses.keys()) assert.ok([200, 201, 204, 404].includes(s), `status ${s}: ${JSON.stringify([...statuses])}`)
      },
    },
    {
      name: 'N13 variant: requestedToolCount as 1e308, -1, 1.5, a string or past 100,000 is a 400 each',
      async run(app) {
        for (const requestedToolCount of [1e308, -1, 1.5, '12', 100_001, Number.MAX_SAFE_INTEGER]) {
          const obs = { instance: 'openai', model: 'gpt-4o', errorMessage: 'too many tools', requestedToolCount }
          assert.equal(await statusOf(await app.call(T, 'POST', '/models/observed-limits', obs)), 400, String(requestedToolCount))
        }
      },
    },
    {
      name: 'N13 variant: a spawn with 3,000 long model names (a record past 400 KB) is a 4xx naming a limit, never a 500',
      async run(app) {
        const provider = 'wireType: openai\nmaxTools: 128\n'
        assert.ok([200, 201].includes((await app.call(T, 'PUT', `${P}/documents/models/big/_provider.yaml`, provider, YAML)).status))
        const models = Array.from({ length: 3_000 }, (_, i) => `big/model-${i}-${'m'.repeat(140)}`)
        const res = await app.call(T, 'POST', `${P}/processes`, { models })
        const text = await res.text()
        assert.ok(res.status >= 400 && res.status < 500, `${res.status}: ${text.slice(0, 300)}`)
        // the model-chain cap (16) refuses it first now; the store's 400 KB mapping is the contract
        // test's (test/contract/process-store.contract.ts, on dynalite)
        assert.match(text, /at most|larger than/)
      },
    },
    {
      name: 'N13 variant: DELETE with If-Match racing PUTs answers 204, 404 or 412 naming a real version, never "undefined"',
      async run(app) {
        const doc = 'type: doc_lookup\ndescription: Raced.\nparameters:\n  path: documents/getting-started.md\n'
        for (let round = 0; round < 10; round++) {
          const put = await app.call(T, 'PUT', `${P}/server-tools/matched`, doc, YAML)
          const etag = put.headers.get('etag') ?? '"1"'
          await put.arrayBuffer()
          const work = [
            app.call(T, 'PUT', `${P}/server-tools/matched`, doc, YAML),
            app.call(T, 'DELETE', `${P}/server-tools/matched`, undefined, { 'if-match': etag }),
            app.call(T, 'PUT', `${P}/server-tools/matched`, doc, YAML),
            app.call(T, 'DELETE', `${P}/server-tools/matched`, undefined, { 'if-match': etag }),
          ]
          for (const res of await Promise.all(work)) {
            const text = await res.text()
            assert.ok([200, 201, 204, 404, 412].includes(res.status), `${res.status}: ${text}`)
            assert.ok(!/undefined|null/.test(text), text)
          }
        }
      },
    },

    // N14: names compared without case
    {
      name: 'N14: client tools TOOL_LIST and Whoami are ignored beside tool_list and whoami, with a warning each',
      async run(app) {
        const res = await app.call(T, 'POST', `${P}/processes`, { clientTools: [clientTool('TOOL_LIST'), clientTool('Whoami')] })
        const body = (await res.json()) as { id: string; warnings: string[] }
        assert.equal(res.status, 201)
        assert.equal(body.warnings.filter((w) => /differs only in case/.test(w)).length, 2, JSON.stringify(body.warnings))
        const names = await manifestNames(app, body.id)
        assert.ok(!names.includes('TOOL_LIST') && !names.includes('Whoami'), names.join(','))
        const call = await app.call(T, 'POST', `${P}/processes/${body.id}/tool-calls`, { name: 'Whoami', params: {} })
        const out = (await call.json()) as { runOn?: string; isError?: boolean }
        assert.notEqual(out.runOn, 'client')
      },
    },
    {
      name: 'N14 variant: two client tools that differ only in case in one declaration are a 400',
      async run(app) {
        const { status, body } = await declare(app, [clientTool('Notify'), clientTool('notify')])
        assert.equal(status, 400)
        assert.match(body.errors?.[0]?.message ?? '', /differs only in case from 'Notify'/)
      },
    },
    {
      name: 'N14 variant: a client tool named like a configured server tool in upper case is ignored on PUT client-tools',
      async run(app) {
        const doc = 'type: doc_lookup\ndescription: Reads the guide.\nparameters:\n  path: documents/getting-started.md\n'
        assert.ok([200, 201].includes((await app.call(T, 'PUT', `${P}/server-tools/read_guide`, doc, YAML)).status))
        const { id } = await spawn(app, `${T}@hostile.test`)
        const put = await app.call(T, 'PUT', `${P}/processes/${id}/client-tools`, {
          clientTools: [clientTool('READ_GUIDE'), clientTool('own_tool')],
        })
        const body = (await put.json()) as { warnings: string[] }
        assert.equal(put.status, 200)
        assert.equal(body.warnings.length, 1)
        assert.match(body.warnings[0], /'READ_GUIDE' differs only in case from the configured or built-in tool 'read_guide'/)
        const runsOn = async (name: string) => {
          const res = await app.call(T, 'POST', `${P}/processes/${id}/tool-calls`, { name, params: {} })
          return ((await res.json()) as { runOn?: string }).runOn
        }
        assert.equal(await runsOn('own_tool'), 'client')
        assert.notEqual(await runsOn('READ_GUIDE'), 'client')
      },
    },
    {
      name: 'N14 variant: client tools shadowing the meta-tools in another case (Invoke_Tool, TOOL_DESCRIPTION) never run on the client',
      async run(app) {
        const { id } = await spawn(app, `${T}@hostile.test`, { clientTools: [clientTool('Invoke_Tool'), clientTool('TOOL_DESCRIPTION')] })
        for (const name of ['Invoke_Tool', 'TOOL_DESCRIPTION']) {
          const call = await app.call(T, 'POST', `${P}/processes/${id}/tool-calls`, { name, params: {} })
          const out = (await call.json()) as { runOn?: string }
          assert.equal(call.status, 200)
          assert.notEqual(out.runOn, 'client', name)
        }
      },
    },

    // info items
    {
      name: `info: one tenant spawning 200 processes at once gets at most its burst (${SPAWN_BURST}) and 429s with Retry-After`,
      async run(app) {
        const results = await Promise.all(
          Array.from({ length: 200 }, async () => {
            const res = await app.call('spawnflood', 'POST', '/projects/p1/processes', {})
            await res.arrayBuffer()
            return { status: res.status, retryAfter: res.headers.get('retry-after') }
          }),
        )
        const created = results.filter((r) => r.status === 201).length
        const limited = results.filter((r) => r.status === 429)
        assert.equal(created + limited.length, 200, JSON.stringify(results.map((r) => r.status)))
        // the burst, plus what a minute-rate of 60 refills while 200 requests are answered
        assert.ok(created >= 1 && created < 100, `created ${created}`)
        assert.ok(limited.every((r) => Number(r.retryAfter) >= 1))
        // another tenant spawns as before
        assert.equal(await statusOf(await app.call(T, 'POST', `${P}/processes`, {})), 201)
      },
    },
    {
      name: 'N5 variant: past its spawn rate, a spawn with a 340 KB body is answered 429 before the body is read (2 KB of it sent), and another tenant spawns',
      async run(app) {
        const tenant = 'spawnbody'
        const body = Buffer.from(JSON.stringify({ models: Array.from({ length: 20_000 }, (_, i) => `cortecs/m${i}`) }))
        const token = await app.token(tenant)
        // the bucket refills one spawn a second: on a loaded machine more than a second can pass
        // between the last 429 and the large spawn, whose body is then read (and refused, 400) —
        // so the bucket is emptied again, at most three times, until the large spawn meets it empty
        let answer = { status: 0, text: '' }
        for (let attempt = 0; attempt < 3 && answer.status !== 429; attempt++) {
          let status = 0
          // the burst, and what the rate of 60 a minute refills while these are answered
          for (let i = 0; i <= SPAWN_BURST + 100 && status !== 429; i++)
            status = await statusOf(await app.call(tenant, 'POST', `${P}/processes`, {}))
          assert.equal(status, 429)
          answer = await largeSpawn(token)
        }
        assert.equal(answer.status, 429, answer.text.slice(0, 300))
        assert.match(answer.text, /may spawn at most 60 processes a minute/)
        assert.equal(await statusOf(await app.call(T, 'POST', `${P}/processes`, {})), 201)

        function largeSpawn(token: string) {
          return new Promise<{ status: number; text: string }>((resolve, reject) => {
            const req = httpRequest(`${app.base}/brain/${tenant}${P}/processes`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length },
            })
            req.on('response', (res) => {
              let text = ''
              res.on('data', (d) => (text += d))
              res.on('end', () => {
                req.destroy()
                resolve({ status: res.statusCode ?? 0, text })
              })
            })
            req.on('error', reject)
            // the rest is never sent: only an answer that did not wait for the body can arrive
            req.write(body.subarray(0, 2_048))
          })
        }
      },
    },
    {
      name: 'info: a forged Host header is not reflected into the auth metadata or the 401 challenge',
      async run(app) {
        const url = new URL(`${app.base}/.well-known/oauth-protected-resource/brain/${T}`)
        const metadata = await rawGet(url, { host: 'evil.example' })
        assert.equal(metadata.status, 200)
        assert.equal(JSON.parse(metadata.body).resource, `${app.base}/brain/${T}`)
        const challenge = await rawGet(new URL(`${app.base}/brain/${T}/projects/p1/server-tools`), { host: 'evil.example' })
        assert.equal(challenge.status, 401)
        assert.ok(!String(challenge.headers['www-authenticate']).includes('evil.example'), String(challenge.headers['www-authenticate']))
      },
    },
    {
      name: "info: a rest tool aimed at the service's own port is refused without naming the port or the service",
      async run(app) {
        const port = new URL(app.base).port
        const doc = `type: rest\ndescription: Self.\nparameters:\n  url: ${app.base}/brain/${T}/projects/p1/server-tools\n`
        assert.ok([200, 201].includes((await app.call(T, 'PUT', `${P}/server-tools/self_call`, doc, YAML)).status))
        const res = await app.call(T, 'POST', `${P}/tools/self_call/invoke`, { params: {} })
        const out = (await res.json()) as { isError: boolean; content: { message: string } }
        assert.equal(out.isError, true)
        const why = out.content.message.slice(out.content.message.indexOf('was not called: '))
        assert.ok(!why.includes(port) && !/endpoint|this service/.test(why), why)
      },
    },
    {
      name: 'info: a call with 1,000 unknown arguments lists 20 of them and counts the rest',
      async run(app) {
        const strict = clientTool('strict_tool', 'Takes one string.', {
          type: 'object',
          properties: { q: { type: 'string' } },
          additionalProperties: false,
        })
        const { id } = await spawn(app, `${T}@hostile.test`, { clientTools: [strict] })
        const params = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`junk_${i}`, i]))
        const res = await app.call(T, 'POST', `${P}/processes/${id}/tool-calls`, { name: 'strict_tool', params })
        const out = (await res.json()) as { isError: boolean; content: { errors?: { message: string }[]; message?: string } }
        const text = JSON.stringify(out)
        assert.equal(out.isError, true, text.slice(0, 300))
        assert.equal(out.content.errors?.length, 21, text.slice(0, 300))
        // the validator stops collecting at 100 errors; the answer lists 20 and counts the other 80
        assert.equal(out.content.errors?.at(-1)?.message, 'and 80 more problems (only the first 20 are listed)')
        assert.ok(text.length < 5_000, `the answer is ${text.length} characters`)
      },
    },
  ],
}

/** A GET over node:http with headers fetch would not let a caller set (Host). */
function rawGet(url: URL, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
    })
    req.on('error', reject)
    req.end()
  })
}
