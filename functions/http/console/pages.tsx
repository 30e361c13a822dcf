/**
 * The console's pages as server-rendered shells: layout, navigation, forms and empty regions.
 * They carry no tenant data — the token lives in the browser's sessionStorage, so the data is
 * fetched by console.js from the service's own JSON API with that token and drawn with DOM APIs.
 */
import type { Child } from 'hono/jsx'

export type PageId = 'signin' | 'tools' | 'tool' | 'agent' | 'usage' | 'activity'

const NAV: { page: PageId; href: string; label: string }[] = [
  { page: 'tools', href: '/console/tools', label: 'Tools' },
  { page: 'agent', href: '/console/agent', label: 'What an agent sees' },
  { page: 'usage', href: '/console/usage', label: 'Usage' },
  { page: 'activity', href: '/console/activity', label: 'Activity' },
]

export interface AssetUrls {
  script: string
  style: string
  icon: string
}

function Layout(props: { page: PageId; title: string; assets: AssetUrls; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title} · Server Tools console</title>
        <link rel="icon" href={props.assets.icon} type="image/svg+xml" />
        <link rel="stylesheet" href={props.assets.style} />
        <script src={props.assets.script} defer></script>
      </head>
      <body data-page={props.page}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <span class="brand">Server Tools</span>
          <nav aria-label="Console">
            <ul>
              {NAV.map((n) => (
                <li>
                  <a
                    href={n.href}
                    aria-current={n.page === props.page || (n.page === 'tools' && props.page === 'tool') ? 'page' : undefined}
                  >
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <span class="who" id="who" aria-live="polite"></span>
          <button type="button" id="signout" class="link" hidden>
            Sign out
          </button>
        </header>
        <main id="main">
          <h1>{props.title}</h1>
          <noscript>
            <p class="error">The console needs JavaScript: it reads the data with your token from the service's own API.</p>
          </noscript>
          <p id="status" role="status" class="status"></p>
          {props.children}
        </main>
      </body>
    </html>
  )
}

const ProjectField = () => (
  <label>
    Project
    <input
      id="project"
      type="text"
      list="projects"
      value="_tenant"
      spellcheck={false}
      autocomplete="off"
      required
      pattern="_tenant|[a-z0-9][a-z0-9_\-]{0,63}"
    />
    <datalist id="projects"></datalist>
  </label>
)

function SignIn() {
  return (
    <>
      <p>
        Paste the bearer token (the one <code>npm start</code> prints as <code>ST_TOKEN</code>). It is kept in this tab's session storage
        and sent only as an Authorization header to this service.
      </p>
      {/* method=post and no name attribute: even without the script the token never reaches a URL */}
      <form id="signin-form" method="post" action="/console" class="stack">
        <label>
          Token
          <input id="token" type="password" autocomplete="off" spellcheck={false} required />
        </label>
        <button type="submit">Sign in</button>
      </form>
      <section id="signed-in" hidden aria-labelledby="signed-in-h">
        <h2 id="signed-in-h">Signed in</h2>
        <dl id="claims" class="pairs"></dl>
      </section>
    </>
  )
}

function Tools() {
  return (
    <>
      {/* biome-ignore lint/a11y/useSemanticElements: a form that submits the filters; the role names it for assistive tech */}
      <form id="tools-form" class="toolbar" role="search">
        <ProjectField />
        <label>
          Label
          <select id="label">
            <option value="">any label</option>
          </select>
        </label>
        <label>
          Text
          <input id="text" type="search" placeholder="name or description" autocomplete="off" />
        </label>
        <label class="check">
          <input id="include-disabled" type="checkbox" checked /> show disabled
        </label>
        <button type="submit">Load</button>
      </form>
      <p id="tools-count" class="muted"></p>
      <div class="scroll">
        <table id="tools-table" class="grid" hidden>
          <caption class="sr-only">Tools of the project, innermost layer first wins</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Layer</th>
              <th scope="col">Enabled</th>
              <th scope="col">Surface</th>
              <th scope="col">Labels</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody id="tools-body"></tbody>
        </table>
      </div>
      <section aria-labelledby="problems-h">
        <h2 id="problems-h">Problems</h2>
        <ul id="problems" class="problems"></ul>
      </section>
    </>
  )
}

function Tool() {
  return (
    <>
      <p>
        <a id="back" href="/console/tools">
          ← all tools
        </a>
      </p>
      <dl id="tool-summary" class="pairs"></dl>
      <section aria-labelledby="prov-h">
        <h2 id="prov-h">Provenance</h2>
        <ol id="provenance" class="layers"></ol>
      </section>
      <section aria-labelledby="yaml-h">
        <h2 id="yaml-h">YAML as stored</h2>
        <pre id="yaml" class="code" tabindex={0}></pre>
      </section>
      <section aria-labelledby="schema-h">
        <h2 id="schema-h">Parameter schema</h2>
        <div id="schemas"></div>
      </section>
    </>
  )
}

function Agent() {
  return (
    <>
      <form id="agent-form" class="toolbar">
        <ProjectField />
        <label>
          Recipe
          <input id="recipe" type="text" list="recipes" value="default" autocomplete="off" spellcheck={false} />
          <datalist id="recipes"></datalist>
        </label>
        <label>
          Engine
          <input id="engine" type="text" list="engines" placeholder="the recipe's" autocomplete="off" spellcheck={false} />
          <datalist id="engines"></datalist>
        </label>
        <label>
          Model
          <input id="model" type="text" placeholder="instance/model" autocomplete="off" spellcheck={false} />
        </label>
        <button type="submit">Preview</button>
      </form>
      <div id="preview" hidden>
        <section aria-labelledby="budget-h">
          <h2 id="budget-h">Budget</h2>
          <div id="budget"></div>
        </section>
        <section id="code-section" aria-labelledby="code-h" hidden>
          <h2 id="code-h">Code surface: execute_code, as the model reads it</h2>
          <p id="code-facts"></p>
          <pre id="code-declaration" class="code" tabindex={0}></pre>
        </section>
        <section aria-labelledby="warnings-h">
          <h2 id="warnings-h">Warnings</h2>
          <ul id="warnings"></ul>
        </section>
        <section aria-labelledby="families-h">
          <h2 id="families-h">Families</h2>
          <div class="scroll">
            <table class="grid">
              <caption class="sr-only">Tool families and what the budget triage did with them</caption>
              <thead>
                <tr>
                  <th scope="col">Family</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason (tier)</th>
                  <th scope="col">Tools</th>
                </tr>
              </thead>
              <tbody id="families"></tbody>
            </table>
          </div>
        </section>
        <section aria-labelledby="deferred-h">
          <h2 id="deferred-h">Deferred</h2>
          <ul id="deferred" class="names"></ul>
        </section>
        <section aria-labelledby="discovery-h">
          <h2 id="discovery-h">Discovery block, as the model reads it</h2>
          <pre id="discovery" class="code" tabindex={0}></pre>
          <h3>Demoted this turn</h3>
          <pre id="demoted-discovery" class="code" tabindex={0}></pre>
        </section>
        <section aria-labelledby="hints-h">
          <h2 id="hints-h">Prompt hints, as the model receives them</h2>
          <p class="muted">
            The promptHint of each tool in the manifest, once each: the engine adds them to the system prompt (over MCP they are the
            server's instructions, under “Notes on your tools”).
          </p>
          <ul id="prompt-hints"></ul>
        </section>
      </div>
    </>
  )
}

function Usage() {
  return (
    <>
      <form id="usage-form" class="toolbar">
        <ProjectField />
        <label>
          Window (days)
          <input id="days" type="number" min="1" max="3650" value="30" />
        </label>
        <label>
          Role
          <select id="role">
            <option value="">every role</option>
          </select>
        </label>
        <button type="submit">Load</button>
      </form>
      <p class="muted">
        Usage is counted per role: the recipe a process was spawned with, else its engine. Calls made outside any process — the invoke route{' '}
        <code>{'POST …/tools/{name}/invoke'}</code>, which <code>server-tools call</code> uses — count under the role <code>_unknown</code>.
      </p>
      <section id="quotas" aria-labelledby="quotas-title">
        <h2 id="quotas-title">Quotas</h2>
        <p class="muted">
          The rules of <code>quotas.yaml</code> that apply to this project (bundled, <code>_tenant</code> and the project's own), each
          window with its use and when it resets. Use counts budget reserved by the servers, so it can run ahead of the calls made.
        </p>
        <div id="quotas-body"></div>
      </section>
      <div id="roles"></div>
    </>
  )
}

/** The audit log (GET /audit): who changed what and who was refused, newest first. */
function Activity() {
  return (
    <>
      <form id="activity-form" class="toolbar">
        <label>
          From
          <input id="activity-from" type="date" />
        </label>
        <label>
          To
          <input id="activity-to" type="date" />
        </label>
        <label>
          Actor
          <input id="activity-actor" type="text" placeholder="token subject" />
        </label>
        <label>
          Action
          <input id="activity-action" type="text" placeholder="document. or secret.put" />
        </label>
        <label>
          Target
          <input id="activity-target" type="text" placeholder="projects/p1/" />
        </label>
        <button type="submit">Load</button>
      </form>
      <table id="activity" class="activity">
        <thead>
          <tr>
            <th>Time (UTC)</th>
            <th>Actor</th>
            <th>Action</th>
            <th>Target</th>
            <th>Outcome</th>
            <th>Versions</th>
            <th>From</th>
          </tr>
        </thead>
        <tbody id="activity-rows"></tbody>
      </table>
      <button id="activity-more" type="button" hidden>
        Older entries
      </button>
    </>
  )
}

const PAGES: Record<PageId, { title: string; body: () => Child }> = {
  signin: { title: 'Sign in', body: SignIn },
  tools: { title: 'Tools', body: Tools },
  tool: { title: 'Tool', body: Tool },
  agent: { title: 'What an agent sees', body: Agent },
  usage: { title: 'Usage', body: Usage },
  activity: { title: 'Activity', body: Activity },
}

export async function renderPage(page: PageId, assets: AssetUrls): Promise<string> {
  const { title, body } = PAGES[page]
  return (
    '<!doctype html>' +
    String(
      await (
        <Layout page={page} title={title} assets={assets}>
          {body()}
        </Layout>
      ),
    )
  )
}
