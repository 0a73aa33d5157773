/**
 * A data dir that a server start would change before serving it (migrate it, make its pepper) or
 * refuses to serve: a reader that must change nothing (`verify`) reports it instead of opening it.
 */
export class DataDirNotReady extends Error {}
