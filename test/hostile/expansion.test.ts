/** Documents that expand (issue 10 F1) against `npm start`, measured by the hostile harness. */
import { rowSet } from './rows/expansion'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
