// The props every page gets, in a module of their own: routes.ts imports the pages (lazily) and
// the pages name this type, so neither imports the other.

/** A page's path variables, given to it as props. */
export type RouteParams = Record<string, string>;
