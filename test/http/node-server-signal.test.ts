/**
 * The request signal a tool call carries on the node server (`npm start`, bench/usage): taken from
 * the Node response, not from a web Request the adapter would build for it (headers copied, the
 * body wrapped as a web stream, an AbortController) — that construction cost a tool call over HTTP
 * more than everything else on its path. Real sockets on 127.0.0.1; counted, not timed: how often
 * the adapter turned a body into a web stream.
 */
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { Readable } from 'node:stream'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { toolError } from '../../lib/calls/outcome'
import type { Tool } from '../../lib/tools/contracts'
import { bareBuiltin, waitForCancelTool } from '../support/cancellable-tool'
import { ALL, tokenFor } from '../support/http'

const servers: ReturnType<typeof serve>[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))))
})

async function listen(fetch: (req: Request, env: unknown) => Response | Promise<Response>): Promise<number> {
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' })
  servers.push(server)
  await new Promise<void>((r) => server.once('listening', () => r()))
  return (server.address() as AddressInfo).port
}

/** A POST written on a raw socket, so the test can close the connection while the call runs. */
function postRaw(port: number, path: string, authorization: string, body: string) {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  return socket
}

/** A whoami tool call over node:http (not fetch, which makes controllers and Headers of its own): the answer's text. */
function whoamiOverNodeHttp(port: number, path: string, auth: Record<string, string>) {
  const body = JSON.stringify({ name: 'whoami', params: {} })
  return () =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = ''
          res.on('data', (d) => (text += d))
          res.on('end', () => resolve(text))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
}

async function processApp(extra: Tool[]) {
  const app = createApp(createMemoryDeps({ extraBuiltins: extra }))
  const token = await tokenFor('acme', ALL)
  const auth = { authorization: `Bearer ${token}` }
  const base = '/brain/acme/projects/p1'
  const put = (path: string, body: string) =>
    app.request(`${base}/documents/${path}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/yaml' }, body })
  await put('engines/e.yaml', `allowedTools: [whoami${extra.map((t) => `, ${t.name}`).join('')}]\n`)
  await put('recipes/r.yaml', 'engine: e\n')
  const spawned = await app.request(`${base}/processes`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ recipe: 'r' }),
  })
  const { id } = (await spawned.json()) as { id: string }
  return { app, auth, path: `${base}/processes/${id}/tool-calls` }
}

describe('the request signal of a tool call on the node server', () => {
  it('aborts the running tool when the client closes its connection', async () => {
    const waiting = waitForCancelTool()
    const { app, auth, path } = await processApp([waiting.tool])
    const port = await listen(app.fetch)
    const body = JSON.stringify({ name: 'wait_for_cancel', params: {} })
    const socket = postRaw(port, path, auth.authorization, body)
    await waiting.started
    socket.destroy() // the client goes away while the tool runs
    expect(await waiting.outcome).toEqual(toolError(expect.stringMatching(/^cancelled: .*(AbortError|prematurely closed)/)))
  })

  it('gives a tool that asks for its signal only after the client left a signal already aborted', async () => {
    let running!: () => void
    let asked!: (aborted: boolean) => void
    const started = new Promise<void>((r) => (running = r))
    const answer = new Promise<boolean>((r) => (asked = r))
    let goOn!: () => void
    const late = bareBuiltin('late_signal', 'Reads its signal when told to.', async (_params, ctx) => {
      running()
      await new Promise<void>((r) => (goOn = r))
      asked(ctx.signal?.aborted ?? false)
      return toolError('asked')
    })
    const { app, auth, path } = await processApp([late])
    const port = await listen(app.fetch)
    const body = JSON.stringify({ name: 'late_signal', params: {} })
    const socket = postRaw(port, path, auth.authorization, body)
    await started
    const closed = new Promise((r) => socket.once('close', r))
    socket.destroy()
    await closed
    // the server sees the close on its next turns of the loop
    await new Promise((r) => setTimeout(r, 50))
    goOn()
    expect(await answer).toBe(true)
  })

  it('makes no AbortController for a tool call whose tool never asks for its signal', async () => {
    const { app, auth, path } = await processApp([])
    const port = await listen(app.fetch)
    // node:http, not fetch: the client makes no controller of its own
    const call = whoamiOverNodeHttp(port, path, auth)
    const Original = globalThis.AbortController
    let made = 0
    globalThis.AbortController = class extends Original {
      constructor() {
        super()
        made++
      }
    }
    try {
      for (let i = 0; i < 3; i++) expect(JSON.parse(await call())).toMatchObject({ isError: false })
    } finally {
      globalThis.AbortController = Original
    }
    expect(made).toBe(0)
  })

  it("writes a tool call's answer from its own header object: no web Headers built (only a request that accepts an event stream has its answer's headers read)", async () => {
    const { app, auth, path } = await processApp([])
    const port = await listen(app.fetch)
    const call = whoamiOverNodeHttp(port, path, auth)
    const Original = globalThis.Headers
    let made = 0
    globalThis.Headers = class extends Original {
      constructor(init?: ConstructorParameters<typeof Headers>[0]) {
        super(init)
        made++
      }
    }
    try {
      for (let i = 0; i < 3; i++) expect(JSON.parse(await call())).toMatchObject({ isError: false })
    } finally {
      globalThis.Headers = Original
    }
    expect(made).toBe(0)
  })

  it('answers a tool call without turning its body into a web stream (the adapter does, for a route that reads c.req.raw)', async () => {
    const toWeb = vi.spyOn(Readable, 'toWeb')
    // the counter sees the adapter's construction: a route that asks the web Request for its signal
    const rawPort = await listen(new Hono().post('/', (c) => c.text(String(c.req.raw.signal.aborted))).fetch)
    expect(await (await fetch(`http://127.0.0.1:${rawPort}/`, { method: 'POST', body: '{}' })).text()).toBe('false')
    expect(toWeb).toHaveBeenCalledTimes(1)
    toWeb.mockClear()

    const { app, auth, path } = await processApp([])
    const port = await listen(app.fetch)
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'whoami', params: {} }),
      })
      expect(await res.json()).toMatchObject({ isError: false, content: { tenant: 'acme', project: 'p1' } })
    }
    expect(toWeb).not.toHaveBeenCalled()
  })
})
