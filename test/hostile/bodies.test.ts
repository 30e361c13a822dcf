/** Hostile request bodies (issue 10 F3) against `npm start`, measured by the hostile harness. */
import { rowSet } from './rows/bodies'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
