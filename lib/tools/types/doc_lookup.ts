/** `doc_lookup` (spec §3): exposes one cascade document as a tool; read live on every call. */

import { success, toolError } from '../../calls/outcome'
import { RELATIVE_PATH_PATTERN } from '../../config/patterns'
import type { ToolFactory } from '../contracts'

interface DocLookupParameters {
  path: string
}

export const docLookupFactory: ToolFactory<DocLookupParameters> = {
  typeId: 'doc_lookup',
  kind: 'single',
  parametersSchema: {
    type: 'object',
    required: ['path'],
    additionalProperties: false,
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        pattern: RELATIVE_PATH_PATTERN,
        description: 'Document path in the cascade, e.g. documents/how_to.md',
      },
    },
  },
  async create(config, env) {
    const { path } = config.parameters
    return [
      {
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        async invoke() {
          const doc = await env.documents.read(path)
          if (!doc)
            return toolError(`Document '${path}' does not exist in project '${env.project}', the tenant layer or the bundled defaults.`, {
              path,
            })
          return success({ path, content: doc.body, chars: doc.body.length, source: doc.source })
        },
      },
    ]
  },
}
