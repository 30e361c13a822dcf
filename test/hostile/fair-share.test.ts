/** Concurrency floods from one tenant against the fair-share gate on `npm start`'s app, measured by the hostile harness. */
import { rowSet } from './rows/fair-share'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
