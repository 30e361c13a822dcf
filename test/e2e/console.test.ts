/**
 * The web console in a real browser: headless Chromium (Debian's `chromium`, installed by
 * .ci/run when missing) driven by playwright-core against `npm start`, with data seeded through
 * the API. Screenshots go to test-artifacts/console/ (git-ignored); with SCREENSHOTS_DIR set, the
 * screenshots the docs show are written there too:
 *   SCREENSHOTS_DIR=docs/screenshots npx vitest run test/e2e/console.test.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QUOTA_XSS_LABEL, seedConsoleData, storeBrokenTool, XSS_DESCRIPTION } from '../support/console-seed'
import { type LocalService, startLocalService, stopLocalService } from '../support/npm-start'

const CHROMIUM = '/usr/bin/chromium'
const ARTIFACTS = resolve('test-artifacts/console')
const DOC_SHOTS = process.env.SCREENSHOTS_DIR ? resolve(process.env.SCREENSHOTS_DIR) : undefined
const DESKTOP = { width: 1200, height: 800 }
/** An iPhone 12–15 viewport in CSS pixels. */
const PHONE = { width: 390, height: 844 }
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

const dataDir = mkdtempSync(join(tmpdir(), 'server-tools-console-'))
let service: LocalService
let browser: Browser
let context: BrowserContext
/** Console errors and uncaught exceptions of every page, by page URL. */
const browserErrors: string[] = []
/** The UTC hour the seed's calls were made in: quota windows are fixed and aligned, so an hourly one may have turned since. */
let seededHour = 0
const hourOf = (ms: number) => Math.floor(ms / 3_600_000)

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true })
  service = await startLocalService(dataDir)
  await seedConsoleData(service.url, service.token)
  seededHour = hourOf(Date.now())
  await stopLocalService(service.child)
  await storeBrokenTool(dataDir)
  service = await startLocalService(dataDir)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  context = await browser.newContext({ viewport: DESKTOP })
  // Every request the pages make must stay on the service's own origin.
  await context.route('**/*', (route) => (new URL(route.request().url()).origin === service.origin ? route.continue() : route.abort()))
}, 120_000)

afterAll(async () => {
  await browser?.close()
  if (service) await stopLocalService(service.child)
  rmSync(dataDir, { recursive: true, force: true })
})

/** One tab for the whole test: sessionStorage (and so the sign-in) belongs to a tab. */
async function openTab(path: string): Promise<Page> {
  const page = await context.newPage()
  page.on('console', (m) => {
    if (m.type() === 'error') browserErrors.push(`${page.url()}: ${m.text()}`)
  })
  page.on('pageerror', (e) => browserErrors.push(`${page.url()}: ${e.message}`))
  await page.goto(`${service.origin}${path}`)
  return page
}

async function signIn(): Promise<Page> {
  const page = await openTab('/console/tools?project=p1')
  await page.waitForURL(/\/console\?next=/)
  await page.fill('#token', service.token)
  await page.click('button[type=submit]')
  await page.waitForURL(/\/console\/tools\?project=p1/)
  return page
}

/** axe-core injected as source (CDP evaluation, so the page's own CSP stays in force). */
async function seriousA11yViolations(page: Page) {
  await page.evaluate(AXE_SOURCE)
  const result = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as any
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/** The whole page, and the first screenful (docs/screenshots/ holds copies of those). */
async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
  await page.screenshot({ path: join(ARTIFACTS, `${name}.screen.png`) })
}
/** A first-screenful screenshot for the docs (console-<name>.png), when SCREENSHOTS_DIR is set. */
async function docShot(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `docs-${name}.png`) })
  if (DOC_SHOTS) await page.screenshot({ path: join(DOC_SHOTS, `console-${name}.png`) })
}

/** How far the page reaches past the viewport's right edge, in CSS pixels (0 = no sideways scroll). */
const sidewaysOverflow = (page: Page) =>
  page.evaluate('Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth') as Promise<number>

const rowNames = (page: Page) => page.$$eval('#tools-body tr', (rows) => rows.map((r) => r.getAttribute('data-tool')))

describe('the web console', () => {
  let page: Page
  const visit = async (path: string) => {
    await page.goto(`${service.origin}${path}`)
    return page
  }

  it('signs in with a pasted token kept in sessionStorage, never in a URL', async () => {
    page = await signIn()
    const kept = await page.evaluate("sessionStorage.getItem('server-tools.token')")
    expect(kept).toBe(service.token)
    expect(page.url()).not.toContain(service.token.slice(0, 20))
    expect(await page.textContent('#who')).toContain('demo')
  })

  it('lists the tools of a project with layer, enabled, surface, labels and problems with line numbers', async () => {
    await page.waitForSelector('#tools-body tr')
    const names = await rowNames(page)
    expect(names).toEqual(expect.arrayContaining(['handbook', 'doc_errors', 'hostile', 'pets', 'retired', 'whoami', 'doc_discovery']))
    const cells = async (name: string) =>
      page.$$eval(`#tools-body tr[data-tool="${name}"] td`, (tds) => tds.map((td) => td.textContent?.trim()))
    expect((await cells('handbook')).slice(1, 6)).toEqual(['doc_lookup', 'project over tenant', 'yes', 'deferred', 'docsproject'])
    expect((await cells('doc_errors')).slice(2, 5)).toEqual(['project over bundled', 'yes', 'primary'])
    expect((await cells('doc_discovery'))[2]).toBe('bundled')
    expect((await cells('whoami'))[2]).toBe('built-in')
    expect((await cells('retired'))[3]).toBe('disabled')
    const problem = await page.textContent('#problems li[data-problem="broken"]')
    expect(problem).toContain('server-tools/broken.yaml')
    expect(problem).toMatch(/line 4:\d+ — /)
    await shot(page, 'tools')
  })

  it('renders a description containing markup as text, and its onerror never runs', async () => {
    const desc = await page.textContent('#tools-body tr[data-tool="hostile"] td.desc')
    expect(desc).toBe(XSS_DESCRIPTION)
    expect(await page.$$('#tools-body img, #tools-body script')).toEqual([])
    await page.waitForTimeout(200)
    expect(await page.evaluate('window.__pwned')).toBeUndefined()
  })

  it('filters by label and by text, and expands a pack into its sub-tools', async () => {
    await page.selectOption('#label', 'pets')
    expect(await rowNames(page)).toEqual(['pets', 'pets__createPet', 'pets__listPets', 'pets__showPetById'])
    await page.selectOption('#label', '')
    expect(await rowNames(page)).not.toContain('pets__listPets')
    await page.click('#tools-body tr[data-tool="pets"] button.toggle')
    expect(await page.getAttribute('#tools-body tr[data-tool="pets"] button.toggle', 'aria-expanded')).toBe('true')
    expect(await rowNames(page)).toEqual(expect.arrayContaining(['pets__createPet', 'pets__listPets', 'pets__showPetById']))
    await shot(page, 'tools-pack-expanded')
    await page.fill('#text', 'team handbook')
    expect(await rowNames(page)).toEqual([])
    await page.fill('#text', 'project handbook')
    expect(await rowNames(page)).toEqual(['handbook'])
    await page.fill('#text', 'listpets')
    expect(await rowNames(page)).toEqual(['pets', 'pets__listPets'])
    await page.fill('#text', '')
  })

  it('shows the _tenant layer on its own', async () => {
    await page.fill('#project', '_tenant')
    await page.click('#tools-form button[type=submit]')
    await page.waitForFunction(() => (globalThis as any).document.getElementById('tools-count').textContent.includes('_tenant'))
    const cells = await page.$$eval('#tools-body tr[data-tool="handbook"] td', (tds) => tds.map((td) => td.textContent?.trim()))
    expect(cells[2]).toBe('tenant')
    expect(cells[6]).toBe('Read the team handbook.')
  })

  it('shows a tool page: its YAML as stored, where it comes from, its parameter schema', async () => {
    const tool = await visit('/console/tool?project=p1&name=handbook')
    await tool.waitForSelector('#schemas pre')
    expect(await tool.textContent('#yaml')).toBe(
      'type: doc_lookup\ndescription: Project handbook\nlabels: [docs, project]\nparameters:\n  path: documents/tools-overview.md\n',
    )
    expect(await tool.$$eval('#provenance li', (lis) => lis.map((l) => l.textContent))).toEqual([
      'comes from the project layer (version 1)',
      'shadows the tenant layer (it shows again if this one is deleted)',
    ])
    expect(JSON.parse((await tool.textContent('#schemas pre'))!)).toMatchObject({ type: 'object' })
    await shot(tool, 'tool')
    await docShot(tool, 'tool')
    const pack = await visit('/console/tool?project=p1&name=pets')
    await pack.waitForSelector('#schema-pets__showPetById + p + pre')
    expect(JSON.parse((await pack.textContent('#schema-pets__showPetById + p + pre'))!)).toMatchObject({ required: ['petId'] })
    expect(await pack.textContent('#yaml')).toContain('operationId: listPets')
    const hostile = await visit('/console/tool?project=p1&name=hostile')
    await hostile.waitForSelector('#tool-summary dd')
    expect(await hostile.$$eval('#tool-summary dd', (dds) => dds.map((d) => d.textContent))).toContain(XSS_DESCRIPTION)
    expect(await hostile.$$('main img')).toEqual([])
    const broken = await visit('/console/tool?project=p1&name=broken')
    await broken.waitForSelector('#status.error')
    await broken.waitForFunction(() => (globalThis as any).document.getElementById('yaml').textContent)
    expect(await broken.textContent('main')).toMatch(/line 4:\d+ — /)
    expect(await broken.textContent('#yaml')).toContain('path: 42')
  })

  it('draws what an agent sees: the budget bar, families with their tier, the deferred list and the discovery block', async () => {
    const agent = await visit('/console/agent?project=p1&recipe=coder')
    await agent.waitForSelector('#budget-bar rect')
    const segments = await agent.$$eval('#budget-bar rect', (rs) =>
      Object.fromEntries(rs.map((r) => [r.getAttribute('class'), Number(r.getAttribute('data-count'))])),
    )
    expect(segments).toEqual({ floor: 2, kept: 1, reserved: 1, demoted: 1 })
    expect(await agent.textContent('#budget .legend')).toContain('limit 4')
    const families = await agent.$$eval('#families tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)),
    )
    expect(families).toEqual(
      expect.arrayContaining([
        ['tool_list', 'kept', 'floor: always in the manifest'],
        ['whoami', 'kept', 'handwritten: a single tool (configured in a layer or built in), not a pack'],
        ['pets', 'deferred', 'deferred until discovered — would rank as pack: a sub-tool of a pack (<pack>__<operation>)'],
        ['doc_errors', 'demoted', 'demoted (did not fit) — dropFirst: the recipe gives it up first'],
      ]),
    )
    expect(await agent.$$eval('#deferred li', (lis) => lis.map((l) => l.textContent))).toEqual(
      expect.arrayContaining(['handbook', 'hostile', 'pets__listPets']),
    )
    const block = await agent.textContent('#discovery')
    expect(block).toContain('## More tools you can load')
    expect(block).toContain(XSS_DESCRIPTION.slice(0, 40))
    expect(await agent.textContent('#demoted-discovery')).toContain('doc_errors')
    expect(await agent.$$('main img')).toEqual([])
    expect(await agent.evaluate('window.__pwned')).toBeUndefined()
    // doc_errors, the one tool with a promptHint, was demoted: the model gets no hint this turn
    expect(await agent.$$eval('#prompt-hints li', (lis) => lis.map((l) => l.textContent))).toEqual([
      'none: no tool in the manifest has a promptHint',
    ])
    await shot(agent, 'agent')
    await docShot(agent, 'agent')
    // a recipe that does not exist: the API's 422 with its did-you-mean, and Chromium's own log line for the 422
    const before = browserErrors.length
    await agent.fill('#recipe', 'coderr')
    await agent.click('#agent-form button[type=submit]')
    await agent.waitForSelector('#status.error')
    expect(await agent.textContent('#status')).toMatch(/coder/)
    expect(browserErrors.splice(before)).toEqual([
      expect.stringMatching(/Failed to load resource: the server responded with a status of 422/),
    ])
  })

  it('previews the default recipe without a recipe in the address: no known limit, an open bar, the prompt hints', async () => {
    const agent = await visit('/console/agent?project=p1')
    await agent.waitForSelector('#budget-bar rect')
    expect(await agent.inputValue('#recipe')).toBe('default')
    expect(await agent.textContent('#budget .legend')).toContain('no known limit')
    const bar = await agent.$$eval('#budget-bar rect', (rs) =>
      rs.map((r) => [r.getAttribute('class'), Number(r.getAttribute('x')) + Number(r.getAttribute('width'))]),
    )
    expect(bar.map(([cls]) => cls)).toEqual(['floor', 'kept'])
    // the tools drawn end within 60 % of the 800-unit bar; the rest is the dashed open end
    expect(Math.max(...bar.map(([, end]) => Number(end)))).toBeLessThanOrEqual(480)
    expect(await agent.$$('#budget-bar line.unbounded')).toHaveLength(1)
    expect(await agent.$$('#budget-bar line.limit')).toEqual([])
    expect(await agent.$$eval('#prompt-hints li', (lis) => lis.map((l) => l.textContent))).toEqual(['Quote the error code you looked up.'])
    expect(await agent.$$eval('#families tr[data-family="doc"] td', (tds) => tds[1].textContent)).toBe('kept')
    await shot(agent, 'agent-no-limit')
    await docShot(agent, 'agent-no-limit')
  })

  it('shows the code surface an endpoint profile chose: the declaration as the model reads it, its bytes and tokens, tenant text as text', async () => {
    const agent = await visit('/console/agent?project=p1&recipe=scripter')
    await agent.waitForSelector('#code-section:not([hidden])')
    const preview = (await (
      await fetch(`${service.url}/projects/p1/surface/preview`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipe: 'scripter' }),
      })
    ).json()) as any
    const declaration = await agent.textContent('#code-declaration')
    expect(declaration).toBe(preview.code.declaration)
    const codeTool = preview.manifest.tools.find((t: { name: string }) => t.name === 'execute_code')
    expect(codeTool.description).toContain(declaration)
    expect(declaration).toContain(XSS_DESCRIPTION.slice(0, 40))
    const facts = await agent.textContent('#code-facts')
    expect(facts).toContain(`${preview.code.declarationBytes.toLocaleString('en-US')} of 49,152 bytes`)
    expect(facts).toContain(`about ${preview.code.estimatedTokens.toLocaleString('en-US')} tokens`)
    expect(facts).toContain('chosen by the model’s endpoint profile')
    expect(await agent.$$('main img')).toEqual([])
    expect(await agent.evaluate('window.__pwned')).toBeUndefined()
    await shot(agent, 'agent-code')
    await docShot(agent, 'agent-code')
    // a recipe on a model without the code rendering: no code section
    await agent.fill('#recipe', 'coder')
    await agent.click('#agent-form button[type=submit]')
    await agent.waitForSelector('#code-section[hidden]', { state: 'attached' })
  })

  it('lists the audit log on the Activity page, newest first, and narrows it with a filter', async () => {
    const activity = await visit('/console/activity')
    await activity.waitForSelector('#activity-rows tr')
    const rows = await activity.$$eval('#activity-rows tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)))
    // the seeded writes are there, each with the token's subject, and the times run backwards
    expect(rows.some((r) => r[1] === 'local-admin' && r[2] === 'server-tool.put' && r[4]?.startsWith('ok'))).toBe(true)
    const times = rows.map((r) => r[0] ?? '')
    expect([...times].sort().reverse()).toEqual(times)
    await activity.fill('#activity-action', 'document.')
    await activity.click('#activity-form button[type=submit]')
    // a function, not a string: the console's CSP forbids eval
    await activity.waitForFunction(() => {
      type Doc = { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> }
      const cells = Array.from((globalThis as unknown as { document: Doc }).document.querySelectorAll('#activity-rows tr td:nth-child(3)'))
      return cells.length > 0 && cells.every((td) => td.textContent?.startsWith('document.'))
    })
    expect(await activity.evaluate('window.__pwned')).toBeUndefined()
    await shot(activity, 'activity')
  })

  it('draws usage per role: demand per tool, the discovery funnel and recommendations', async () => {
    const usage = await visit('/console/usage?project=p1')
    await usage.waitForSelector('section[data-role="coder"] svg.demand rect')
    const role = 'section[data-role="coder"]'
    const labels = await usage.$$eval(`${role} svg.demand text[text-anchor="end"]`, (ts) => ts.map((t) => t.textContent))
    expect(labels.slice(0, 2)).toEqual(['whoami', 'handbook'])
    expect(await usage.textContent(`${role} .recs`)).toMatch(/Promote handbook/)
    expect(await usage.textContent(`${role} .funnel`)).toContain('Primary, never called')
    await shot(usage, 'usage')
    await docShot(usage, 'usage')
    await usage.selectOption('#role', 'coder')
    expect(await usage.$$eval('#roles > section', (ss) => ss.map((s) => s.getAttribute('data-role')))).toEqual(['coder'])
  })

  it('charts calls per day from the usage store, one bar per day that had calls, adding up to the role’s calls', async () => {
    const usage = await visit('/console/usage?project=p1&days=14')
    const role = 'section[data-role="coder"]'
    await usage.waitForSelector(`${role} svg.per-day rect`)
    const bars = await usage.$$eval(`${role} svg.per-day rect`, (rs) =>
      rs.map((r) => [r.getAttribute('data-day'), Number(r.getAttribute('data-calls'))]),
    )
    const total = bars.reduce((n, [, calls]) => n + Number(calls), 0)
    expect(await usage.textContent(`${role} p.muted`)).toMatch(new RegExp(`^${total} calls,`))
    const today = new Date().toISOString().slice(0, 10)
    expect(bars.map(([day]) => day).every((d) => String(d) <= today)).toBe(true)
    const labels = await usage.$$eval(`${role} svg.per-day text`, (ts) => ts.map((t) => t.textContent))
    expect(labels).toContain(new Date(Date.now() - 13 * 86_400_000).toISOString().slice(0, 10))
    // nothing of this fresh service fell outside the window
    expect(await usage.$$eval(`${role} > div > p.muted`, (ps) => ps.length)).toBe(0)
  })

  it('says what the _unknown role is on the usage page', async () => {
    const usage = await visit('/console/usage?project=p1')
    const note = await usage.waitForSelector('section[data-role="_unknown"] p.note')
    expect(await note.textContent()).toMatch(/outside any process, through POST …\/tools\/\{name\}\/invoke/)
    expect(await usage.textContent('main > p.muted')).toContain('_unknown')
  })

  it('shows the project’s quotas on the usage page, one row per window with its use and reset, selectors drawn as text', async () => {
    const usage = await visit('/console/usage?project=p1')
    await usage.waitForSelector('table.quotas tbody tr')
    const rows = await usage.$$eval('table.quotas tbody tr', (trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-kind'),
        tr.classList.contains('spent'),
        ...[...tr.querySelectorAll('td')].map((td) => td.textContent),
      ]),
    )
    expect(rows.map((r) => r.slice(0, 5))).toEqual([
      ['rate', false, 'project #1', 'tool = whoami', '100 calls per hour'],
      ['volume', true, 'project #2', 'tool = doc_errors', '1 call per day'],
      ['tokens', false, 'project #3', 'role = coder, type = prompt_template', '200000 model tokens per day'],
      ['rate', false, 'project #4', `label = ${QUOTA_XSS_LABEL}`, '5 calls per minute'],
    ])
    // use is budget reserved in slices: at least the 8 whoami calls the seed made, unless the
    // hourly window has turned since (a run across the hour: CI once read 0 at 15:00 UTC)
    const used = Number(/^ (\d+) \/ 100$/.exec(String(rows[0][5]))?.[1])
    if (hourOf(Date.now()) === seededHour) expect(used).toBeGreaterThanOrEqual(8)
    else expect(used).toBeGreaterThanOrEqual(0)
    expect(rows.slice(1).map((r) => [r[5], r[6]])).toEqual([
      [' 1 / 1', '0'],
      [' 0 / 200000', '200000'],
      [' 0 / 5', '5'],
    ])
    expect(rows[1][7]).toMatch(/^in \d+ (s|min|h) \(\d{4}-\d\d-\d\d 00:00 UTC\)$/)
    expect(await usage.$$eval('#quotas img', (imgs) => imgs.length)).toBe(0)
    expect(await usage.evaluate('window.__pwned')).toBeUndefined()
    await shot(usage, 'usage-quotas')
  })

  it('shows per role the calls made from code and the calls refused, per tool', async () => {
    const usage = await visit('/console/usage?project=p1')
    const cells = async (role: string) => {
      await usage.waitForSelector(`section[data-role="${role}"] table.code-refusals tr[data-tool]`)
      return usage.$$eval(`section[data-role="${role}"] table.code-refusals tbody tr`, (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      )
    }
    expect(await cells('automator')).toEqual([['whoami', '2', '2', '0']])
    expect(await cells('_unknown')).toEqual([['doc_errors', '1', '0', '1']])
    expect(await usage.textContent('section[data-role="_unknown"] p.muted')).toContain('0 of the calls from code, 1 call refused')
  })

  it('never scrolls sideways at phone width (390 px) on any page, and is photographed there', async () => {
    // the same tab: the sign-in lives in its sessionStorage
    const phone = page
    await phone.setViewportSize(PHONE)
    const pages: [string, string, string | undefined][] = [
      ['/console', 'h1', undefined],
      ['/console/tools?project=p1', '#tools-body tr', 'tools.phone'],
      ['/console/tool?project=p1&name=pets', '#schemas pre', undefined],
      ['/console/agent?project=p1&recipe=coder', '#budget-bar rect', 'agent.phone'],
      ['/console/agent?project=p1', '#budget-bar rect', 'agent-no-limit.phone'],
      ['/console/agent?project=p1&recipe=scripter', '#code-section:not([hidden])', undefined],
      ['/console/usage?project=p1', 'svg.per-day rect', 'usage.phone'],
    ]
    const overflow: Record<string, number> = {}
    for (const [path, ready, name] of pages) {
      await phone.goto(`${service.origin}${path}`)
      await phone.waitForSelector(ready)
      await phone.waitForLoadState('networkidle')
      overflow[path] = await sidewaysOverflow(phone)
      await shot(phone, `phone-${path.replace(/\W+/g, '-')}`)
      if (name) await docShot(phone, name)
    }
    await phone.setViewportSize(DESKTOP)
    expect(overflow).toEqual(Object.fromEntries(pages.map(([path]) => [path, 0])))
  })

  it('shows the tools page photographed for the docs at desktop width', async () => {
    const tools = await visit('/console/tools?project=p1')
    await tools.waitForSelector('#tools-body tr')
    expect(await sidewaysOverflow(tools)).toBe(0)
    await docShot(tools, 'tools')
  })

  it('has no serious or critical accessibility violations on any page', async () => {
    const pages = [
      '/console',
      '/console/tools?project=p1',
      '/console/tool?project=p1&name=pets',
      '/console/agent?project=p1&recipe=coder',
      '/console/agent?project=p1&recipe=scripter',
      '/console/usage?project=p1',
      '/console/activity',
    ]
    const found: Record<string, string[]> = {}
    for (const path of pages) {
      await visit(path)
      await page.waitForLoadState('networkidle')
      found[path] = await seriousA11yViolations(page)
    }
    expect(found).toEqual(Object.fromEntries(pages.map((p) => [p, []])))
  })

  it('sends a strict Content-Security-Policy and no-referrer, nosniff and no framing with every page', async () => {
    const res = await fetch(`${service.origin}/console/tools`)
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    )
    expect([res.headers.get('x-content-type-options'), res.headers.get('referrer-policy')]).toEqual(['nosniff', 'no-referrer'])
  })

  it('signs out: the token leaves sessionStorage and the pages ask for it again', async () => {
    await page.click('#signout')
    await page.waitForURL(/\/console$/)
    expect(await page.evaluate("sessionStorage.getItem('server-tools.token')")).toBeNull()
    await page.goto(`${service.origin}/console/usage`)
    await page.waitForURL(/\/console\?next=%2Fconsole%2Fusage/)
  })

  it('logged no console error on any page', () => {
    expect(browserErrors).toEqual([])
  })
})
