#!/usr/bin/env node
// The `server-tools` command: TypeScript sources run through tsx (a dependency), as `npm start` does.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../functions/cli/main.ts')
await main()
