/**
 * The HTTP layer's share of functions/lazy/shared.ts (which explains why): imported for its effect
 * on the bundle only, by the modules functions/http loads with a dynamic import.
 */
import './app'
