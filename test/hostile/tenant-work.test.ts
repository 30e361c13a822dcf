/** Tenant-written patterns, schemas and YAML (issue 21 N1, N8, N4) against `npm start`, measured by the hostile harness. */
import { rowSet } from './rows/tenant-work'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
