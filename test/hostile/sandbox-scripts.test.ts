/** Hostile scripts (issue 10 F2, F5, F6, F10) against `npm start`, measured by the hostile harness. */
import { rowSet } from './rows/sandbox'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
