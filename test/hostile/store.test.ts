/** The embedded store under a soak (issue 10 F9) on `npm start`'s app, measured by the hostile harness. */
import { rowSet } from './rows/store'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
