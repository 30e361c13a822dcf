// @ts-check
/**
 * The Server Tools console in the browser. No build step: this file is served as written.
 *
 * The token is kept in sessionStorage and sent only as an Authorization header to this origin's
 * JSON API; it never goes into a URL. Every value from the API (names, descriptions, labels,
 * YAML — tenant-written) reaches the page through textContent, attributes set one by one, or
 * SVG text nodes: never through innerHTML or markup strings.
 */
;(() => {
  const TOKEN_KEY = 'server-tools.token'
  const PROJECT_KEY = 'server-tools.project'
  const RECENT_KEY = 'server-tools.projects'
  const SVG_NS = 'http://www.w3.org/2000/svg'
  const page = document.body.dataset.page || ''

  // ────────── DOM helpers: text only ──────────

  /**
   * @param {string} tag
   * @param {Record<string, string | boolean | undefined>} [attrs]
   * @param {...(Node | string | number | null | undefined | false)} children
   * @returns {HTMLElement}
   */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag)
    setAttrs(el, attrs)
    append(el, children)
    return el
  }

  /**
   * @param {string} tag
   * @param {Record<string, string | number | undefined>} [attrs]
   * @param {...(Node | string | number | null | undefined | false)} children
   * @returns {SVGElement}
   */
  function s(tag, attrs, ...children) {
    const el = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag))
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined) el.setAttribute(k, String(v))
    append(el, children)
    return el
  }

  /** @param {Element} el @param {Record<string, string | boolean | undefined>} [attrs] */
  function setAttrs(el, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === false) continue
      el.setAttribute(k, v === true ? '' : v)
    }
  }

  /** @param {Element} el @param {(Node | string | number | null | undefined | false)[]} children */
  function append(el, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue
      el.append(typeof c === 'object' ? c : document.createTextNode(String(c)))
    }
  }

  /** @param {string} id @returns {HTMLElement} */
  function $(id) {
    const el = document.getElementById(id)
    if (!el) throw new Error(`the page has no #${id}`)
    return el
  }

  /** @param {string} id */
  const inputValue = (id) => /** @type {HTMLInputElement} */ ($(id)).value.trim()

  /** @param {Element} el */
  const clear = (el) => el.replaceChildren()

  /** @param {string} message @param {boolean} [isError] */
  function status(message, isError) {
    const el = $('status')
    el.textContent = message
    el.classList.toggle('error', Boolean(isError))
  }

  /** @param {string} source */
  const layerBadge = (source) => h('span', { class: `badge ${source}` }, source === 'builtin' ? 'built-in' : source)

  /** @param {string[]} labels */
  const labelList = (labels) => h('span', {}, ...(labels || []).map((l) => h('span', { class: 'label' }, l)))

  /** @param {string} text @param {number} max */
  const shorten = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

  // ────────── the session ──────────

  /** @param {string} token @returns {{ tenant?: unknown, sub?: unknown, scope?: unknown, exp?: unknown } | undefined} */
  function claimsOf(token) {
    const part = token.split('.')[1]
    if (!part) return undefined
    try {
      const json = atob(
        part
          .replace(/-/g, '+')
          .replace(/_/g, '/')
          .padEnd(Math.ceil(part.length / 4) * 4, '='),
      )
      const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (ch) => ch.charCodeAt(0))))
      return claims && typeof claims === 'object' ? claims : undefined
    } catch {
      return undefined
    }
  }

  const token = sessionStorage.getItem(TOKEN_KEY) || ''
  const claims = token ? claimsOf(token) : undefined
  const tenant = claims && typeof claims.tenant === 'string' ? claims.tenant : ''

  function signOut() {
    sessionStorage.removeItem(TOKEN_KEY)
    location.assign('/console')
  }

  function requireSignIn() {
    if (tenant) return true
    location.assign(`/console?next=${encodeURIComponent(location.pathname + location.search)}`)
    return false
  }

  class ApiError extends Error {
    /** @param {number} status @param {string} message @param {any[]} errors */
    constructor(status, message, errors) {
      super(message)
      this.status = status
      this.errors = errors
    }
  }

  /**
   * A call to this service's API as the signed-in tenant. 401 ends the session.
   * @param {string} path below /brain/<tenant>
   * @param {{ method?: string, body?: unknown, text?: boolean, bearer?: string, tenant?: string }} [opts]
   * @returns {Promise<any>}
   */
  async function api(path, opts = {}) {
    /** @type {Record<string, string>} */
    const headers = { authorization: `Bearer ${opts.bearer || token}`, accept: opts.text ? '*/*' : 'application/json' }
    if (opts.body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`/brain/${encodeURIComponent(opts.tenant || tenant)}${path}`, {
      method: opts.method || 'GET',
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    })
    if (!res.ok) {
      /** @type {any} */
      let problem = {}
      try {
        problem = await res.json()
      } catch {
        // not a problem document: the status says enough
      }
      if (res.status === 401 && !opts.bearer) signOut()
      throw new ApiError(
        res.status,
        problem.detail || `${res.status} ${res.statusText}`,
        Array.isArray(problem.errors) ? problem.errors : [],
      )
    }
    if (opts.text) return { body: await res.text(), source: res.headers.get('x-document-source') || '' }
    return res.json()
  }

  /** @param {unknown} e */
  function fail(e) {
    status(e instanceof Error ? e.message : String(e), true)
  }

  function drawHeader() {
    if (!tenant) return
    $('who').textContent = `${tenant} · ${typeof claims?.sub === 'string' ? claims.sub : ''}`
    const out = $('signout')
    out.hidden = false
    out.addEventListener('click', signOut)
  }

  // ────────── project field (kept in the URL and the session, never secret) ──────────

  const params = new URLSearchParams(location.search)

  function initProject() {
    const input = /** @type {HTMLInputElement} */ ($('project'))
    input.value = params.get('project') || sessionStorage.getItem(PROJECT_KEY) || '_tenant'
    const recent = recentProjects()
    const list = $('projects')
    for (const p of new Set(['_tenant', ...recent])) list.append(h('option', { value: p }))
    return input
  }

  /** @returns {string[]} */
  function recentProjects() {
    try {
      const v = JSON.parse(sessionStorage.getItem(RECENT_KEY) || '[]')
      return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []
    } catch {
      return []
    }
  }

  /** @param {string} project @param {Record<string, string>} [extra] */
  function rememberProject(project, extra = {}) {
    sessionStorage.setItem(PROJECT_KEY, project)
    sessionStorage.setItem(RECENT_KEY, JSON.stringify([project, ...recentProjects().filter((p) => p !== project)].slice(0, 10)))
    const q = new URLSearchParams({ project, ...extra })
    history.replaceState(null, '', `${location.pathname}?${q}`)
  }

  /** @param {string} project @param {string} [name] */
  const toolHref = (project, name) => `/console/tool?${new URLSearchParams({ project, ...(name ? { name } : {}) })}`

  const p = encodeURIComponent

  // ────────── sign in ──────────

  function signInPage() {
    const form = /** @type {HTMLFormElement} */ ($('signin-form'))
    if (tenant) showClaims()
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault()
      const candidate = inputValue('token')
      const c = claimsOf(candidate)
      if (!c || typeof c.tenant !== 'string') return status('That is not a bearer token with a tenant claim (a JWT like eyJ…).', true)
      try {
        // A harmless read proves the token before it is kept; 403 (a token without tools:read) still signs in.
        await api('/projects/_tenant/server-tools', { bearer: candidate, tenant: c.tenant })
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 403)
          return status(`The service refused the token: ${e instanceof Error ? e.message : e}`, true)
      }
      sessionStorage.setItem(TOKEN_KEY, candidate)
      const next = params.get('next') || ''
      location.assign(/^\/console\/[a-z]/.test(next) && !next.startsWith('//') ? next : '/console/tools')
    })
  }

  function showClaims() {
    $('signed-in').hidden = false
    const dl = $('claims')
    const exp = typeof claims?.exp === 'number' ? new Date(claims.exp * 1000).toISOString() : 'never'
    for (const [k, v] of [
      ['Tenant', tenant],
      ['Subject', String(claims?.sub ?? '')],
      ['Scopes', String(claims?.scope ?? '')],
      ['Expires', exp],
    ]) {
      dl.append(h('dt', {}, k), h('dd', {}, v))
    }
  }

  // ────────── tools ──────────

  function toolsPage() {
    const project = initProject()
    const labelSelect = /** @type {HTMLSelectElement} */ ($('label'))
    const text = /** @type {HTMLInputElement} */ ($('text'))
    const includeDisabled = /** @type {HTMLInputElement} */ ($('include-disabled'))
    if (params.get('label')) labelSelect.append(h('option', { value: params.get('label') || '' }, params.get('label') || ''))
    labelSelect.value = params.get('label') || ''
    text.value = params.get('q') || ''
    /** @type {{ views: any[], subTools: Map<string, any[]>, problems: any[], project: string } | undefined} */
    let data
    /** @type {Set<string>} */
    const expanded = new Set()

    async function load() {
      const proj = project.value.trim()
      status('Loading…')
      try {
        const [listing, callable] = await Promise.all([
          api(`/projects/${p(proj)}/server-tools?includeDisabled=${includeDisabled.checked}`),
          api(`/projects/${p(proj)}/tools`),
        ])
        /** @type {Map<string, any[]>} */
        const subTools = new Map()
        for (const t of callable.tools) {
          if (!t.pack) continue
          if (!subTools.has(t.pack)) subTools.set(t.pack, [])
          subTools.get(t.pack)?.push(t)
        }
        data = {
          views: listing.tools,
          subTools,
          problems: [
            ...listing.problems,
            ...callable.problems.filter(
              (/** @type {any} */ x) => !listing.problems.some((/** @type {any} */ y) => y.name === x.name && y.message === x.message),
            ),
          ],
          project: proj,
        }
        rememberProject(proj)
        fillLabels()
        status('')
        render()
      } catch (e) {
        fail(e)
      }
    }

    function fillLabels() {
      if (!data) return
      const labels = new Set()
      for (const v of data.views) for (const l of v.labels) labels.add(l)
      for (const list of data.subTools.values()) for (const t of list) for (const l of t.labels) labels.add(l)
      const chosen = labelSelect.value
      labelSelect.replaceChildren(
        h('option', { value: '' }, 'any label'),
        ...[...labels].sort().map((l) => h('option', { value: String(l) }, String(l))),
      )
      labelSelect.value = labels.has(chosen) ? chosen : ''
    }

    /** @param {any} t */
    function matches(t) {
      const label = labelSelect.value
      const q = text.value.trim().toLowerCase()
      return (
        (!label || (t.labels || []).includes(label)) &&
        (!q ||
          t.name.toLowerCase().includes(q) ||
          String(t.description || '')
            .toLowerCase()
            .includes(q))
      )
    }

    function render() {
      if (!data) return
      const { views, subTools, problems, project: proj } = data
      const body = $('tools-body')
      clear(body)
      let shown = 0
      for (const v of views) {
        const subs = subTools.get(v.name) || []
        const subsShown = subs.filter(matches)
        if (!matches(v) && subsShown.length === 0) continue
        shown++
        const isPack = subs.length > 0
        // a filter that selects sub-tools shows them; otherwise the toggle decides
        const filtering = Boolean(labelSelect.value || text.value.trim())
        const open = expanded.has(v.name) || (filtering && subsShown.length > 0)
        const nameCell = h('td', {})
        if (isPack) {
          const toggle = h(
            'button',
            {
              type: 'button',
              class: 'toggle',
              'aria-expanded': String(open),
              'aria-label': `${open ? 'Hide' : 'Show'} the ${subs.length} sub-tools of ${v.name}`,
            },
            open ? '▾' : '▸',
          )
          toggle.addEventListener('click', () => {
            if (expanded.has(v.name)) expanded.delete(v.name)
            else expanded.add(v.name)
            render()
          })
          nameCell.append(toggle)
        }
        nameCell.append(h('a', { href: toolHref(proj, v.name) }, v.name))
        if (isPack) nameCell.append(' ', h('span', { class: 'muted' }, `(${subs.length})`))
        const surface = isPack ? (v.primary && !v.defaultDeferred ? 'primary' : 'deferred') : v.primary ? 'primary' : 'deferred'
        body.append(
          h(
            'tr',
            { 'data-tool': v.name },
            nameCell,
            h('td', {}, v.type),
            h(
              'td',
              {},
              layerBadge(v.source),
              Array.isArray(v.shadows) && v.shadows.length ? h('span', { class: 'muted over' }, ` over ${v.shadows.join(', ')}`) : null,
            ),
            h('td', {}, v.enabled ? 'yes' : h('span', { class: 'badge off' }, 'disabled')),
            h('td', {}, surface),
            h('td', {}, labelList(v.labels)),
            h('td', { class: 'desc' }, shorten(String(v.description || ''), 160)),
          ),
        )
        if (!open) continue
        for (const t of filtering ? subsShown : subs) {
          body.append(
            h(
              'tr',
              { class: 'sub', 'data-tool': t.name },
              h('td', {}, h('a', { href: `${toolHref(proj, v.name)}#schema-${t.name}` }, t.name)),
              h('td', {}, 'sub-tool'),
              h('td', {}, layerBadge(t.source)),
              h('td', {}, 'yes'),
              h('td', {}, t.primary ? 'primary' : 'deferred'),
              h('td', {}, labelList(t.labels)),
              h('td', { class: 'desc' }, shorten(String(t.description || ''), 160)),
            ),
          )
        }
      }
      $('tools-table').hidden = false
      $('tools-count').textContent = `${shown} of ${views.length} tools in ${proj}`
      const list = $('problems')
      clear(list)
      if (problems.length === 0) list.append(h('li', { class: 'muted' }, 'No problems.'))
      for (const pr of problems) list.append(problemItem(pr))
    }

    $('tools-form').addEventListener('submit', (ev) => {
      ev.preventDefault()
      load()
    })
    labelSelect.addEventListener('change', render)
    text.addEventListener('input', render)
    includeDisabled.addEventListener('change', load)
    load()
  }

  /** @param {any} pr */
  function problemItem(pr) {
    const li = h(
      'li',
      { 'data-problem': pr.name },
      h('strong', {}, pr.name),
      ' ',
      layerBadge(pr.source),
      ' ',
      pr.path ? h('code', {}, pr.path) : null,
      ': ',
      pr.message,
    )
    if (Array.isArray(pr.errors) && pr.errors.length) li.append(issueList(pr.errors))
    return li
  }

  /** @param {any[]} issues */
  function issueList(issues) {
    return h(
      'ul',
      {},
      ...issues.map((i) =>
        h(
          'li',
          {},
          i.line
            ? h('span', { class: 'line' }, `line ${i.line}${i.column ? `:${i.column}` : ''}`)
            : i.pointer
              ? h('code', {}, i.pointer)
              : null,
          i.line || i.pointer ? ' — ' : '',
          String(i.message ?? ''),
        ),
      ),
    )
  }

  // ────────── one tool ──────────

  async function toolPage() {
    const project = params.get('project') || '_tenant'
    const name = params.get('name') || ''
    const back = /** @type {HTMLAnchorElement} */ ($('back'))
    back.href = `/console/tools?${new URLSearchParams({ project })}`
    if (!name) return status('No tool named in the address (?name=…).', true)
    document.title = `${name} · Server Tools console`
    $('main').querySelector('h1')?.replaceChildren(`Tool ${name}`)
    // The listing (not GET of the one tool) so a broken document shows its problems instead of a 422.
    const [listing, callable] = await Promise.all([
      api(`/projects/${p(project)}/server-tools?includeDisabled=true`),
      api(`/projects/${p(project)}/tools`),
    ])
    const view = listing.tools.find((/** @type {any} */ t) => t.name === name)
    const problem = listing.problems.find((/** @type {any} */ x) => x.name === name)
    if (!view && !problem) return status(`No tool '${name}' in project ${project} or any outer layer.`, true)
    if (view) drawToolSummary(view, project)
    if (problem) {
      status(`This tool's document is broken: ${problem.message}`, true)
      $('tool-summary').after(h('section', { class: 'problems' }, h('h2', {}, 'Problems'), h('ul', {}, problemItem(problem))))
    }
    const yaml = $('yaml')
    if (view?.source === 'builtin') yaml.textContent = '(no document: a built-in, defined in code)'
    else {
      const doc = await api(`/projects/${p(project)}/documents/server-tools/${p(name)}.yaml`, { text: true })
      yaml.textContent = doc.body
      yaml.before(h('p', { class: 'muted' }, 'from the ', layerBadge(doc.source || 'project'), ' layer'))
    }
    const schemas = $('schemas')
    const own = callable.tools.filter((/** @type {any} */ t) => t.name === name || t.pack === name)
    if (own.length === 0) schemas.append(h('p', { class: 'muted' }, 'Not callable in this project (disabled or broken).'))
    for (const t of own) {
      schemas.append(h('h3', { id: `schema-${t.name}` }, t.name))
      if (t.pack) schemas.append(h('p', { class: 'desc' }, String(t.description ?? '')))
      schemas.append(h('pre', { class: 'code', tabindex: '0' }, JSON.stringify(t.inputSchema, null, 2)))
    }
    if (location.hash) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView()
  }

  /** @param {any} v @param {string} project */
  function drawToolSummary(v, project) {
    const surface = v.primary && !v.defaultDeferred ? 'primary' : 'deferred'
    /** @type {[string, Node | string][]} */
    const rows = [
      ['Project', project],
      ['Type', v.type],
      ['Layer', layerBadge(v.source)],
      ['Version', v.version === 0 ? '— (bundled or built-in)' : String(v.version)],
      ['Enabled', v.enabled ? 'yes' : 'no'],
      ['Surface', surface],
      ['Labels', labelList(v.labels)],
      ['Description', String(v.description ?? '')],
    ]
    if (v.promptHint) rows.push(['Prompt hint', String(v.promptHint)])
    if (v.searchHint) rows.push(['Search hint', String(v.searchHint)])
    const summary = $('tool-summary')
    for (const [k, val] of rows) summary.append(h('dt', {}, k), h('dd', {}, val))
    const prov = $('provenance')
    prov.append(h('li', {}, 'comes from the ', layerBadge(v.source), ' layer', v.version ? ` (version ${v.version})` : ''))
    const shadows = Array.isArray(v.shadows) ? v.shadows : []
    if (shadows.length === 0) prov.append(h('li', { class: 'muted' }, 'shadows no other layer'))
    for (const layer of shadows)
      prov.append(
        h(
          'li',
          {},
          'shadows the ',
          h('span', { class: 'shadowed' }, layerBadge(String(layer))),
          ' layer (it shows again if this one is deleted)',
        ),
      )
  }

  // ────────── what an agent sees ──────────

  function agentPage() {
    const project = initProject()
    for (const [key, id] of [
      ['recipe', 'recipe'],
      ['engine', 'engine'],
      ['model', 'model'],
    ]) {
      const v = params.get(key)
      if (v) /** @type {HTMLInputElement} */ ($(id)).value = v
    }
    fillDocumentNames(project.value.trim())
    project.addEventListener('change', () => fillDocumentNames(project.value.trim()))
    $('agent-form').addEventListener('submit', (ev) => {
      ev.preventDefault()
      preview()
    })
    // The recipe field holds 'default' until changed: the page shows what that recipe gets at once.
    preview()

    async function preview() {
      const proj = project.value.trim()
      const recipe = inputValue('recipe')
      const engine = inputValue('engine')
      const model = inputValue('model')
      /** @type {Record<string, unknown>} */
      const body = {}
      if (recipe) body.recipe = recipe
      if (engine) body.engine = engine
      if (model) body.models = [model]
      status('Computing the preview…')
      try {
        const result = await api(`/projects/${p(proj)}/surface/preview`, { method: 'POST', body })
        rememberProject(proj, Object.fromEntries(Object.entries({ recipe, engine, model }).filter(([, v]) => v)))
        status('')
        drawPreview(result)
      } catch (e) {
        $('preview').hidden = true
        fail(e)
        if (e instanceof ApiError && e.errors.length) $('status').append(issueList(e.errors))
      }
    }
  }

  /** Recipe and engine names for the pickers: this layer's, the tenant's, and the bundled default. @param {string} project */
  async function fillDocumentNames(project) {
    for (const [prefix, listId] of [
      ['recipes/', 'recipes'],
      ['engines/', 'engines'],
    ]) {
      const names = new Set(['default'])
      const layers = project === '_tenant' ? ['_tenant'] : [project, '_tenant']
      const found = await Promise.allSettled(layers.map((l) => api(`/projects/${p(l)}/documents?prefix=${p(prefix)}`)))
      for (const f of found)
        if (f.status === 'fulfilled')
          for (const d of f.value.documents)
            names.add(
              String(d.path)
                .slice(prefix.length)
                .replace(/\.ya?ml$/, ''),
            )
      $(listId).replaceChildren(...[...names].sort().map((n) => h('option', { value: n })))
    }
  }

  /** @param {any} r */
  function drawPreview(r) {
    $('preview').hidden = false
    const families = Array.isArray(r.families) ? r.families : []
    /** @param {any} f @returns {string[]} */
    const namesOf = (f) => (Array.isArray(f.tools) ? f.tools : Array.isArray(f.names) ? f.names : [])
    const count = (/** @type {(f: any) => boolean} */ pred) =>
      families.filter(pred).reduce((/** @type {number} */ n, /** @type {any} */ f) => n + namesOf(f).length, 0)
    const budget = r.manifest?.budget || {}
    const floor = count((f) => f.status === 'kept' && f.tier === 'floor')
    const kept = count((f) => f.status === 'kept' && f.tier !== 'floor')
    const demoted = typeof budget.demoted === 'number' ? budget.demoted : count((f) => f.status === 'demoted')
    drawBudget($('budget'), { limit: budget.limit, effective: budget.effective, reserved: budget.reserved || 0, floor, kept, demoted })

    const warnings = $('warnings')
    clear(warnings)
    const ws = Array.isArray(r.warnings) ? r.warnings : []
    if (ws.length === 0) warnings.append(h('li', { class: 'muted' }, 'none'))
    for (const w of ws) warnings.append(h('li', {}, typeof w === 'string' ? w : String(w?.message ?? JSON.stringify(w))))

    const tbody = $('families')
    clear(tbody)
    for (const f of families) {
      const names = namesOf(f)
      tbody.append(
        h(
          'tr',
          { 'data-family': f.family },
          h('td', {}, String(f.family)),
          h('td', {}, h('span', { class: `badge ${f.status}` }, String(f.status))),
          h('td', {}, tierReason(f)),
          h('td', {}, h('span', { class: 'muted' }, `${names.length}: `), names.join(', ')),
        ),
      )
    }
    const deferred = $('deferred')
    clear(deferred)
    // every tool left to discovery: the deferred families (the recipe's own defer list is part of them)
    const fromFamilies = families.filter((/** @type {any} */ f) => f.status === 'deferred').flatMap(namesOf)
    const d = [...new Set(fromFamilies.length ? fromFamilies : Array.isArray(r.deferred) ? r.deferred : [])].sort()
    if (d.length === 0) deferred.append(h('li', { class: 'muted' }, 'none'))
    for (const n of d) deferred.append(h('li', {}, typeof n === 'string' ? n : String(n?.name ?? '')))
    const hints = $('prompt-hints')
    clear(hints)
    const ph = Array.isArray(r.manifest?.promptHints) ? r.manifest.promptHints : []
    if (ph.length === 0) hints.append(h('li', { class: 'muted' }, 'none: no tool in the manifest has a promptHint'))
    for (const hint of ph) hints.append(h('li', {}, String(hint)))
    drawCode(r.code)
    $('discovery').textContent = r.manifest?.discoveryBlock || '(empty: nothing is deferred)'
    $('demoted-discovery').textContent = r.manifest?.demotedDiscoveryBlock || '(empty: nothing was demoted)'
  }

  /**
   * Code mode: the declaration exactly as execute_code's description carries it, and its size.
   * @param {any} code
   */
  function drawCode(code) {
    $('code-section').hidden = !code
    if (!code) return
    const n = (/** @type {unknown} */ v) => (typeof v === 'number' ? v.toLocaleString('en-US') : '?')
    const declared = Array.isArray(code.declared) ? code.declared.length : 0
    const over = Array.isArray(code.overBudget) ? code.overBudget : []
    const by = code.chosenBy === 'endpoint' ? 'the model’s endpoint profile' : 'the recipe (surface: code)'
    const facts = [
      `${declared} tool${declared === 1 ? '' : 's'} declared`,
      `${n(code.declarationBytes)} of ${n(code.budgetBytes)} bytes`,
      `about ${n(code.estimatedTokens)} tokens`,
      `chosen by ${by}`,
    ]
    if (over.length) facts.push(`over the budget (${code.budgetBy}), left to discovery: ${over.join(', ')}`)
    $('code-facts').textContent = facts.join(' · ')
    $('code-declaration').textContent = String(code.declaration ?? '')
  }

  /** Why the triage ranked a family where it did (its tier, most important first). */
  const TIER_REASONS = /** @type {Record<string, string>} */ ({
    floor: 'floor: always in the manifest',
    activated: 'activated: described or called recently',
    keep: 'keep: named in the recipe’s allowedToolsKeep',
    add: 'add: added by the recipe',
    handwritten: 'handwritten: a single tool (configured in a layer or built in), not a pack',
    pack: 'pack: a sub-tool of a pack (<pack>__<operation>)',
    dropFirst: 'dropFirst: the recipe gives it up first',
  })

  /** @param {any} f */
  function tierReason(f) {
    const base = TIER_REASONS[f.tier] ?? String(f.tier ?? '')
    if (f.status === 'demoted') return `demoted (did not fit) — ${base}`
    if (f.status === 'deferred') return `deferred until discovered — would rank as ${base}`
    return base
  }

  /**
   * A horizontal bar of slots: floor | kept | free | reserved up to the limit line, then what did
   * not fit (demoted) past it. Without a known limit there is no whole to fill: floor | kept at a
   * fixed size per tool, then an open end — never a bar drawn full.
   * @param {HTMLElement} host
   * @param {{ limit: number | null, effective: number | null, reserved: number, floor: number, kept: number, demoted: number }} b
   */
  function drawBudget(host, b) {
    clear(host)
    const used = b.floor + b.kept
    const free = b.effective === null ? 0 : Math.max(0, b.effective - used)
    const reserved = b.limit === null ? 0 : b.reserved
    const inside = b.limit === null ? used : Math.max(b.limit, used)
    const width = 800
    const gap = b.demoted ? 12 : 0
    // no limit: at most 24 units a tool and at most 60 % of the width, the rest is the open end
    const scale = b.limit === null ? Math.min(24, (width * 0.6) / Math.max(1, used)) : (width - gap) / Math.max(1, inside + b.demoted)
    const parts = /** @type {[string, number][]} */ ([
      ['floor', b.floor],
      ['kept', b.kept],
      ['free', free],
      ['reserved', reserved],
      ['demoted', b.demoted],
    ])
    const desc = `limit ${b.limit ?? 'none'}: floor ${b.floor}, kept ${b.kept}, free ${free}, reserved ${reserved}; ${b.demoted} demoted past the limit`
    const svg = s('svg', {
      viewBox: `0 0 ${width} 50`,
      width: '100%',
      height: 50,
      preserveAspectRatio: 'xMinYMid meet',
      role: 'img',
      'aria-label': `Tool budget: ${desc}`,
      id: 'budget-bar',
    })
    let x = 0
    for (const [cls, n] of parts) {
      if (cls === 'demoted') x = inside * scale + gap
      if (!n) continue
      const w = n * scale
      svg.append(
        s(
          'rect',
          { class: cls, x: x.toFixed(1), y: 4, width: Math.max(0, w - 1).toFixed(1), height: 26, 'data-count': n },
          s('title', {}, `${cls}: ${n}`),
        ),
      )
      x += w
    }
    if (b.limit === null) {
      const ox = used * scale + 6
      svg.append(
        s('line', { class: 'unbounded', x1: ox.toFixed(1), x2: width - 4, y1: 17, y2: 17 }),
        s('text', { x: width - 4, y: 47, 'text-anchor': 'end' }, 'no known limit: every tool fits'),
      )
    } else {
      const lx = Math.min(width - 1, b.limit * scale)
      svg.append(
        s('line', { class: 'limit', x1: lx.toFixed(1), x2: lx.toFixed(1), y1: 0, y2: 36 }),
        s('text', { x: Math.max(0, lx - 4).toFixed(1), y: 47, 'text-anchor': 'end' }, `limit ${b.limit}`),
      )
    }
    host.append(
      svg,
      h(
        'ul',
        { class: 'legend' },
        ...parts.map(([cls, n]) => h('li', {}, h('span', { class: `swatch ${cls}` }), `${cls} ${n}`)),
        h('li', {}, b.limit === null ? 'no known limit' : `limit ${b.limit}`),
      ),
    )
  }

  // ────────── usage ──────────

  function usagePage() {
    const project = initProject()
    const days = /** @type {HTMLInputElement} */ ($('days'))
    const roleSelect = /** @type {HTMLSelectElement} */ ($('role'))
    if (params.get('days')) days.value = params.get('days') || '30'
    /** @type {any[]} */
    let roles = []

    async function load() {
      const proj = project.value.trim()
      status('Loading…')
      try {
        const quotas = api(`/quotas?project=${p(proj)}`).then(
          (res) => quotaTable(res.rules),
          // a token without tools:read still sees usage; the section says why it is empty
          (/** @type {any} */ e) =>
            h('p', { class: 'muted' }, `The quotas could not be read: ${e instanceof Error ? e.message : String(e)}`),
        )
        roles = await api(`/admin/projects/${p(proj)}/insights/tool-usage?days=${p(days.value || '30')}`)
        $('quotas-body').replaceChildren(await quotas)
        rememberProject(proj, { days: days.value })
        const chosen = roleSelect.value || params.get('role') || ''
        roleSelect.replaceChildren(h('option', { value: '' }, 'every role'), ...roles.map((r) => h('option', { value: r.role }, r.role)))
        roleSelect.value = roles.some((r) => r.role === chosen) ? chosen : ''
        status(roles.length ? '' : 'Nothing recorded for this project yet.')
        render()
      } catch (e) {
        fail(e)
      }
    }

    function render() {
      const host = $('roles')
      clear(host)
      for (const r of roles) if (!roleSelect.value || r.role === roleSelect.value) host.append(roleSection(r))
    }

    $('usage-form').addEventListener('submit', (ev) => {
      ev.preventDefault()
      load()
    })
    roleSelect.addEventListener('change', render)
    load()
  }

  /**
   * The quota rules of GET /quotas, one row per window. Rule matches are tenant-written: text nodes only.
   * @param {any[]} rules
   */
  function quotaTable(rules) {
    if (!Array.isArray(rules) || rules.length === 0)
      return h(
        'p',
        { class: 'muted', id: 'no-quotas' },
        'No quota rules apply to this project: its calls are capped by nothing but capacity.',
      )
    const rows = []
    for (const r of rules) {
      const where = `${r.layer === 'tenant' ? '_tenant' : r.layer} #${Number(r.index) + 1}`
      const match = Object.entries(r.match || {})
        .map(([k, v]) => `${k} = ${v}`)
        .join(', ')
      for (const w of r.windows || []) {
        const what =
          w.kind === 'tokens'
            ? `${w.limit} model tokens per ${r.volume?.per}`
            : w.kind === 'volume'
              ? `${plural(w.limit, 'call')} per ${r.volume?.per}`
              : w.kind === 'burst'
                ? `burst of ${w.limit}`
                : `${plural(w.limit, 'call')} per ${r.rate?.per}`
        const resets = `in ${duration(Number(w.resetsInSeconds))} (${String(w.resetsAt).replace('T', ' ').slice(0, 16)} UTC)`
        rows.push(
          h(
            'tr',
            { 'data-kind': w.kind, class: Number(w.remaining) <= 0 ? 'spent' : undefined },
            h('td', { class: 'quota-rule' }, where),
            h('td', {}, match || 'every call'),
            h('td', {}, what),
            h(
              'td',
              {},
              h('meter', { min: '0', max: String(w.limit), value: String(w.used), 'aria-label': `${where}: ${w.used} of ${w.limit} used` }),
              ` ${w.used} / ${w.limit}`,
            ),
            h('td', {}, String(w.remaining)),
            h('td', {}, resets),
            h('td', {}, String(w.refusedHere || 0)),
          ),
        )
      }
    }
    return h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'grid quotas' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Rule'),
            h('th', { scope: 'col' }, 'Applies to'),
            h('th', { scope: 'col' }, 'Limit'),
            h('th', { scope: 'col' }, 'Used'),
            h('th', { scope: 'col' }, 'Left'),
            h('th', { scope: 'col' }, 'Resets'),
            h('th', { scope: 'col' }, 'Refused by this server'),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    )
  }

  /** @param {number} s seconds */
  function duration(s) {
    if (!Number.isFinite(s)) return '?'
    if (s < 120) return `${s} s`
    if (s < 7200) return `${Math.round(s / 60)} min`
    if (s < 172800) return `${Math.round(s / 3600)} h`
    return `${Math.round(s / 86400)} days`
  }

  /**
   * Tools with calls from code or refusals: what a script did under this role, and what it was denied.
   * @param {any} r
   */
  function codeAndRefusals(r) {
    const tools = (r.tools || []).filter((/** @type {any} */ t) => t.codeCalls > 0 || t.refusals > 0)
    if (!tools.length) return null
    return h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'grid code-refusals' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Tool'),
            h('th', { scope: 'col' }, 'Calls'),
            h('th', { scope: 'col' }, 'From code'),
            h('th', { scope: 'col' }, 'Refused'),
          ),
        ),
        h(
          'tbody',
          {},
          ...tools.map((/** @type {any} */ t) =>
            h(
              'tr',
              { 'data-tool': t.toolName },
              h('td', {}, t.toolName),
              h('td', {}, String(t.calls)),
              h('td', {}, String(t.codeCalls)),
              h('td', {}, String(t.refusals)),
            ),
          ),
        ),
      ),
    )
  }

  /** @param {any} r */
  function roleSection(r) {
    const id = `role-${String(r.role).replace(/[^A-Za-z0-9_-]/g, '_')}`
    const last = r.lastActivityAt ? `${new Date(r.lastActivityAt).toISOString().replace('T', ' ').slice(0, 16)} UTC` : 'never'
    return h(
      'section',
      { class: 'role', 'aria-labelledby': id, 'data-role': r.role },
      h('h2', { id }, `Role ${r.role}`),
      r.role === '_unknown'
        ? h(
            'p',
            { class: 'note' },
            'Not a recipe or engine: these calls came outside any process, through POST …/tools/{name}/invoke (server-tools call uses it), so no recipe names their role. Calls of spawned processes and MCP sessions count under their recipe.',
          )
        : null,
      h(
        'p',
        { class: 'muted' },
        `${plural(r.calls, 'call')}, ${plural(r.discoveryHits, 'discovery', 'discoveries')}, ${plural(r.listedHits, 'listing')} over ${plural(r.toolCount, 'tool')}; last activity ${last}${r.codeCalls || r.refusals ? `; ${r.codeCalls || 0} of the calls from code, ${plural(r.refusals || 0, 'call')} refused` : ''}`,
      ),
      r.codeCalls || r.refusals ? h('h3', {}, 'Calls from code and refusals') : null,
      codeAndRefusals(r),
      h('h3', {}, 'Calls per day (UTC)'),
      callsPerDayChart(r),
      h('h3', {}, 'Demand per tool'),
      demandChart(r),
      h('h3', {}, 'Discovery funnel'),
      h(
        'div',
        { class: 'funnel' },
        funnelBox('Described, never called', r.describedNeverCalled),
        funnelBox('Deferred, never discovered', r.deferredNeverDiscovered),
        funnelBox('Primary, never called', r.primaryNeverCalled),
      ),
      h('h3', {}, 'Recommendations'),
      r.recommendations.length === 0
        ? h('p', { class: 'muted' }, 'None: the surface matches what this role uses.')
        : h(
            'ul',
            { class: 'recs' },
            ...r.recommendations.map((/** @type {any} */ x) =>
              h('li', { class: x.kind }, h('strong', {}, `${x.kind === 'promote' ? 'Promote' : 'Demote'} ${x.family}`), ` — ${x.reason}`),
            ),
          ),
    )
  }

  /** @param {number} n @param {string} one @param {string} [many] */
  const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

  const DAY_MS = 86_400_000

  /**
   * One bar per UTC day of the window the API answered (days without calls draw no bar), scaled
   * to the busiest day; the calls outside the window or from before day counts began are named.
   * @param {any} r
   */
  function callsPerDayChart(r) {
    const per = r.callsPerDay
    if (!per || !Array.isArray(per.counts)) return h('p', { class: 'muted' }, 'This service does not report calls per day.')
    const from = Date.parse(`${per.from}T00:00:00Z`)
    const days = Math.max(1, Math.round((Date.parse(`${per.to}T00:00:00Z`) - from) / DAY_MS) + 1)
    const counts = new Map(per.counts.map((/** @type {any} */ c) => [c.day, Number(c.calls) || 0]))
    const inWindow = [...counts.values()].reduce((a, b) => a + b, 0)
    const max = Math.max(1, ...counts.values())
    const left = 36
    const plotW = 760
    const plotH = 90
    const slot = plotW / days
    const svg = s('svg', {
      viewBox: `0 0 ${left + plotW + 4} ${plotH + 34}`,
      width: '100%',
      role: 'img',
      'aria-label': `Calls per day for role ${r.role} from ${per.from} to ${per.to}: ${inWindow} in all, at most ${max} on one day`,
      class: 'per-day',
    })
    svg.append(
      s('line', { class: 'axis', x1: left, x2: left + plotW, y1: plotH + 4, y2: plotH + 4 }),
      s('text', { x: left - 6, y: 14, 'text-anchor': 'end' }, String(max)),
      s('text', { x: left - 6, y: plotH + 4, 'text-anchor': 'end' }, '0'),
      s('text', { x: left, y: plotH + 24 }, per.from),
      s('text', { x: left + plotW, y: plotH + 24, 'text-anchor': 'end' }, per.to),
    )
    for (let i = 0; i < days; i++) {
      const day = new Date(from + i * DAY_MS).toISOString().slice(0, 10)
      const n = counts.get(day) || 0
      if (!n) continue
      const bh = Math.max(1, (n / max) * (plotH - 6))
      svg.append(
        s(
          'rect',
          {
            class: 'calls',
            x: (left + i * slot + slot * 0.1).toFixed(1),
            y: (plotH + 4 - bh).toFixed(1),
            width: Math.max(1, slot * 0.8).toFixed(1),
            height: bh.toFixed(1),
            'data-day': day,
            'data-calls': n,
          },
          s('title', {}, `${day}: ${plural(n, 'call')}`),
        ),
      )
    }
    const outside = r.calls - inWindow
    return h(
      'div',
      {},
      svg,
      outside > 0
        ? h(
            'p',
            { class: 'muted' },
            `${plural(outside, 'call')} of the ${r.calls} fell before ${per.from} or before day counts began; they are in the totals only.`,
          )
        : null,
    )
  }

  /** @param {string} title @param {string[] | null} names */
  function funnelBox(title, names) {
    return h(
      'section',
      {},
      h('h4', {}, `${title}: ${names === null ? '—' : names.length}`),
      names === null
        ? h('p', { class: 'muted' }, 'No recipe resolves for this role.')
        : names.length === 0
          ? h('p', { class: 'muted' }, 'none')
          : h('ul', {}, ...names.map((n) => h('li', {}, n))),
    )
  }

  /** Stacked horizontal bars, calls then discoveries, one row per tool (by demand). @param {any} r */
  function demandChart(r) {
    const tools = r.tools.filter((/** @type {any} */ t) => t.demand > 0).slice(0, 40)
    if (tools.length === 0) return h('p', { class: 'muted' }, 'No calls or discoveries in the record.')
    const row = 22
    const labelW = 260
    const barW = 480
    const max = Math.max(...tools.map((/** @type {any} */ t) => t.demand))
    const svg = s('svg', {
      viewBox: `0 0 ${labelW + barW + 60} ${tools.length * row + 8}`,
      width: '100%',
      role: 'img',
      'aria-label': `Demand per tool for role ${r.role}: calls and discoveries`,
      class: 'demand',
    })
    tools.forEach((/** @type {any} */ t, /** @type {number} */ i) => {
      const y = i * row + 4
      const cw = (t.calls / max) * barW
      const dw = (t.discoveryHits / max) * barW
      svg.append(
        s('text', { x: labelW - 8, y: y + 14, 'text-anchor': 'end' }, shorten(t.toolName, 38)),
        s(
          'rect',
          { class: 'calls', x: labelW, y, width: cw.toFixed(1), height: row - 6 },
          s('title', {}, `${t.toolName}: ${t.calls} calls`),
        ),
        s(
          'rect',
          { class: 'disc', x: (labelW + cw).toFixed(1), y, width: dw.toFixed(1), height: row - 6 },
          s('title', {}, `${t.toolName}: ${t.discoveryHits} discoveries`),
        ),
        s('text', { x: (labelW + cw + dw + 6).toFixed(1), y: y + 14 }, String(t.demand)),
      )
    })
    const table = h(
      'table',
      { class: 'grid' },
      h('caption', { class: 'sr-only' }, `Demand per tool for role ${r.role}`),
      h('thead', {}, h('tr', {}, ...['Tool', 'Family', 'Calls', 'Discoveries', 'Listed'].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        {},
        ...r.tools.map((/** @type {any} */ t) =>
          h(
            'tr',
            {},
            h('td', {}, t.toolName),
            h('td', {}, t.family),
            h('td', {}, t.calls),
            h('td', {}, t.discoveryHits),
            h('td', {}, t.listedHits),
          ),
        ),
      ),
    )
    return h(
      'div',
      {},
      h(
        'ul',
        { class: 'legend' },
        h('li', {}, h('span', { class: 'swatch calls' }), 'calls'),
        h('li', {}, h('span', { class: 'swatch disc' }), 'discoveries'),
      ),
      svg,
      h('details', {}, h('summary', {}, 'The numbers'), h('div', { class: 'scroll' }, table)),
    )
  }

  // ────────── activity (the audit log) ──────────

  function activityPage() {
    const rows = $('activity-rows')
    const more = /** @type {HTMLButtonElement} */ ($('activity-more'))
    /** @type {string | undefined} */
    let next
    /** @param {string} id */
    const value = (id) => /** @type {HTMLInputElement} */ ($(id)).value.trim()

    /** @param {boolean} append */
    async function load(append) {
      const q = new URLSearchParams({ limit: '50' })
      if (value('activity-from')) q.set('from', value('activity-from'))
      if (value('activity-to')) q.set('to', value('activity-to'))
      for (const key of ['actor', 'action', 'target']) if (value(`activity-${key}`)) q.set(key, value(`activity-${key}`))
      if (append && next) q.set('cursor', next)
      status('Loading…')
      try {
        const page = await api(`/audit?${q}`)
        if (!append) clear(rows)
        for (const e of page.entries) rows.append(activityRow(e))
        next = page.next
        more.hidden = !next
        status(rows.childElementCount ? '' : 'No activity matches.')
      } catch (e) {
        fail(e)
      }
    }

    $('activity-form').addEventListener('submit', (ev) => {
      ev.preventDefault()
      load(false)
    })
    more.addEventListener('click', () => load(true))
    load(false)
  }

  /** @param {any} e */
  function activityRow(e) {
    const versions = e.versionBefore || e.versionAfter ? `${e.versionBefore || '–'} → ${e.versionAfter || '–'}` : ''
    // a digest stands for many refusals of one kind (lib/audit/refusal-digest.ts)
    const times = e.repeated ? ` ×${e.repeated}, ${String(e.firstAt || '').slice(11, 19)}–${String(e.lastAt || '').slice(11, 19)}` : ''
    const outcome = `${e.outcome}${e.status ? ` ${e.status}` : ''}${e.reason ? ` (${e.reason})` : ''}${times}`
    return h(
      'tr',
      { class: `outcome-${e.outcome}` },
      h(
        'td',
        {},
        String(e.at || '')
          .replace('T', ' ')
          .slice(0, 19),
      ),
      h('td', {}, e.actor?.subject ? e.actor.subject : '(no valid token)'),
      h('td', {}, e.action),
      h('td', {}, e.target),
      h('td', {}, outcome),
      h('td', {}, versions),
      h('td', {}, [e.client, e.sourceAddress].filter(Boolean).join(' ')),
    )
  }

  // ────────── start ──────────

  drawHeader()
  if (page === 'signin') return signInPage()
  if (!requireSignIn()) return
  const run = { tools: toolsPage, tool: toolPage, agent: agentPage, usage: usagePage, activity: activityPage }[page]
  if (run) Promise.resolve(run()).catch(fail)
})()
