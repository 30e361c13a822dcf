/**
 * The document cascade: project → _tenant → bundled. One storage round trip per lookup
 * (a BatchGetItem of both layers), one Query per layer for listings, run in parallel.
 */
import type { BundledFile, BundledLayer } from './bundled'
import type { DocumentStore, DocumentVersion, StoredDocument } from './ports'
import { docId, scopeOf, TENANT_LAYER } from './ports'

export type Layer = 'project' | 'tenant' | 'bundled'

export interface LayeredDocument {
  path: string
  body: string
  /** The JSON form of a structured body's data (StoredDocument.json), when its layer has one. */
  json?: string
  version: number
  source: Layer
  stored?: StoredDocument
}

/** A document read through the cascade (project → _tenant → bundled). */
export interface CascadeDocument {
  path: string
  body: string
  /** The JSON form of a structured body's data, when its layer has one (StoredDocument.json). */
  json?: string
  version: number
  source: Layer
}

/** The cascade of one tenant/project, as tools and catalogs read it. */
export interface CascadeReader {
  read(path: string): Promise<CascadeDocument | undefined>
}

export class DocumentCascade {
  constructor(
    private readonly store: DocumentStore,
    private readonly bundled: BundledLayer,
  ) {}

  /** The innermost document at `path`, or undefined (the same single round trip as `readLayers`, building only the one it returns). */
  async read(tenant: string, project: string, path: string): Promise<LayeredDocument | undefined> {
    const tenantKey = { scope: scopeOf(tenant, TENANT_LAYER), path }
    if (project === TENANT_LAYER) {
      const doc = await this.store.get(tenantKey)
      if (doc) return fromStored(doc, 'tenant')
    } else {
      const projectKey = { scope: scopeOf(tenant, project), path }
      const found = await this.store.getMany([projectKey, tenantKey])
      const p = found.get(docId(projectKey))
      if (p) return fromStored(p, 'project')
      const t = found.get(docId(tenantKey))
      if (t) return fromStored(t, 'tenant')
    }
    const bundled = this.bundled.get(path)
    return bundled && fromBundled(bundled)
  }

  /** Every layer's document at `path`, innermost first (the same single round trip as `read`). */
  async readLayers(tenant: string, project: string, path: string): Promise<LayeredDocument[]> {
    const out: LayeredDocument[] = []
    const tenantKey = { scope: scopeOf(tenant, TENANT_LAYER), path }
    if (project === TENANT_LAYER) {
      const doc = await this.store.get(tenantKey)
      if (doc) out.push(fromStored(doc, 'tenant'))
    } else {
      const projectKey = { scope: scopeOf(tenant, project), path }
      const found = await this.store.getMany([projectKey, tenantKey])
      const p = found.get(docId(projectKey))
      if (p) out.push(fromStored(p, 'project'))
      const t = found.get(docId(tenantKey))
      if (t) out.push(fromStored(t, 'tenant'))
    }
    const bundled = this.bundled.get(path)
    if (bundled) out.push(fromBundled(bundled))
    return out
  }

  /** Every layer's documents under `prefix`, outermost first (bundled, tenant, project). */
  async listLayers(
    tenant: string,
    project: string,
    prefix: string,
  ): Promise<{ bundled: LayeredDocument[]; tenant: LayeredDocument[]; project: LayeredDocument[] }> {
    const [t, p] = await Promise.all([
      this.store.list(scopeOf(tenant, TENANT_LAYER), prefix),
      project === TENANT_LAYER ? Promise.resolve([]) : this.store.list(scopeOf(tenant, project), prefix),
    ])
    return {
      bundled: this.bundled.list(prefix).map(fromBundled),
      tenant: t.map((d) => fromStored(d, 'tenant')),
      project: p.map((d) => fromStored(d, 'project')),
    }
  }

  /** Path and version of every layer's documents under `prefix` (no bodies read): what changed, cheaply. */
  async listLayerVersions(
    tenant: string,
    project: string,
    prefix: string,
  ): Promise<{ bundled: DocumentVersion[]; tenant: DocumentVersion[]; project: DocumentVersion[] }> {
    const [t, p] = await Promise.all([
      this.store.listVersions(scopeOf(tenant, TENANT_LAYER), prefix),
      project === TENANT_LAYER ? Promise.resolve([]) : this.store.listVersions(scopeOf(tenant, project), prefix),
    ])
    return { bundled: this.bundled.list(prefix).map((f) => ({ path: f.path, version: 0 })), tenant: t, project: p }
  }

  /** A reader bound to one tenant/project, handed to tool factories. */
  reader(tenant: string, project: string): CascadeReader {
    return {
      read: async (path: string): Promise<CascadeDocument | undefined> => {
        const doc = await this.read(tenant, project, path)
        return (
          doc && {
            path: doc.path,
            body: doc.body,
            ...(doc.json !== undefined ? { json: doc.json } : {}),
            version: doc.version,
            source: doc.source,
          }
        )
      },
    }
  }
}

export const fromStored = (d: StoredDocument, source: Layer): LayeredDocument => {
  const doc: LayeredDocument = { path: d.key.path, body: d.body, version: d.version, source, stored: d }
  if (d.json !== undefined) doc.json = d.json
  return doc
}
export const fromBundled = (f: BundledFile): LayeredDocument => {
  const doc: LayeredDocument = { path: f.path, body: f.body, version: 0, source: 'bundled' }
  if (f.json !== undefined) doc.json = f.json
  return doc
}
