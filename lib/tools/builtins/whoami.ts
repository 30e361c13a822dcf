/** Built-in `whoami`: who and where the caller is, as the service sees it. */

import { success } from '../../calls/outcome'
import type { Tool } from '../contracts'
import { PRIMARY_META_BUILTIN } from '../contracts'

export const whoamiTool: Tool = {
  name: 'whoami',
  description: 'Tell the tenant, project, caller subject and process id (when there is one) this call runs as.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  ...PRIMARY_META_BUILTIN,
  labels: [...PRIMARY_META_BUILTIN.labels, 'read-only'],
  title: 'Who am I',
  searchHint: 'tenant, project and caller of this session',
  async invoke(_params, ctx) {
    return success({
      tenant: ctx.tenant,
      project: ctx.project,
      subject: ctx.subject,
      ...(ctx.processId ? { processId: ctx.processId } : {}),
    })
  },
}
