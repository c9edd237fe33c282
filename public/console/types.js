// @ts-check
// Shapes of the control API's answers the console reads (types only: no module imports this at run time).

/**
 * GET /_sandbox/meta: the server's own constants.
 * @typedef {object} SandboxMeta
 * @property {string[]} versions partner API versions, newest first
 * @property {string} unversioned the version that answers a request without a version parameter
 * @property {string[]} scopes
 * @property {Record<string, string>} scopeLabels
 * @property {string} clientReadScope
 * @property {string[]} clientGroups values of include, in the order the service writes them
 * @property {string[]} writeKinds
 * @property {Record<string, string>} writeKindLabels
 */

/**
 * @typedef {object} Office
 * @property {number} officeId
 * @property {string} officeDescription
 * @property {boolean} [archived]
 */

/**
 * @typedef {object} Agency
 * @property {number} agencyId
 * @property {string} name
 * @property {boolean} active
 * @property {boolean} connected
 * @property {boolean} supportsIncludes
 * @property {number} defaultOfficeId
 * @property {Office[]} offices
 * @property {{ active: boolean }[]} users
 */

/**
 * @typedef {object} Subscription
 * @property {number} agencyId
 * @property {string[]} scopes
 * @property {boolean} optedOut
 */

/**
 * @typedef {object} Integration
 * @property {string} clientId
 * @property {string} name
 * @property {Subscription[]} agencies
 */

/**
 * A partner write as the control plane lists it; `data` holds the decoded fields.
 * @typedef {object} WriteView
 * @property {number} seq
 * @property {string} refId
 * @property {string} kind
 * @property {string} status
 * @property {number} clientNumber
 * @property {string} integration
 * @property {string} version
 * @property {string} receivedAt
 * @property {string | null} appliedAt
 * @property {Record<string, any>} data
 */

/**
 * A client's read model (the control plane's, or a partner API version's).
 * @typedef {{ clientNumber: number, deleted?: boolean, details?: Record<string, any>, people?: Record<string, any>[],
 *   policies?: Record<string, any>[], claims?: unknown[], invoices?: unknown[], [key: string]: unknown }} ClientModel
 */

/**
 * @typedef {object} JournalEntry
 * @property {number} id
 * @property {string} time
 * @property {string} method
 * @property {string} path
 * @property {string} version
 * @property {Record<string, string>} query
 * @property {string | null} integration
 * @property {number | null} agencyId
 * @property {number} status
 * @property {number} durationMs
 * @property {string[]} warnings
 * @property {unknown} [body]
 * @property {string} [fault]
 * @property {'dropped' | 'abandoned'} [answerLost]
 */

/**
 * @typedef {object} FaultMatch
 * @property {string} [method]
 * @property {string} [path]
 * @property {string} [version]
 * @property {string} [clientId]
 * @property {number} [agencyId]
 */

/**
 * @typedef {object} FaultEffect
 * @property {number} [status]
 * @property {unknown} [body]
 * @property {Record<string, string>} [headers]
 * @property {number} [delayMs]
 * @property {boolean} [drop]
 * @property {boolean} [dropAnswer]
 */

/**
 * @typedef {object} FaultInput
 * @property {FaultMatch} match
 * @property {FaultEffect} effect
 * @property {number} [times]
 * @property {number} [every]
 * @property {number} [probability]
 * @property {number} [seed]
 */

/**
 * @typedef {FaultInput & { id: string, matched: number, hits: number, exhausted: boolean }} FaultRule
 */

/**
 * @typedef {object} Clock
 * @property {string} now
 * @property {boolean} frozen
 */

/**
 * GET /_sandbox/info
 * @typedef {object} Info
 * @property {string} version
 * @property {{ id: string, name: string }} world the world the answer is about
 * @property {string} startedAt
 * @property {string} fixture
 * @property {{ db: string, journalSize: number, controlToken: boolean }} settings
 * @property {{ integrations: number, agencies: number, clients: number, journal: number, faults: number,
 *   writes: { pending: number, applied: number } }} counts
 * @property {{ running: boolean, changes: number }} simulator
 */

/**
 * An examiner session (GET /_sandbox/sessions).
 * @typedef {object} Session
 * @property {number} id
 * @property {string} name
 * @property {string | null} clientId null: every integration is recorded
 * @property {string} startedAt
 * @property {string} [endedAt] absent while the session records
 * @property {number} recorded
 * @property {boolean} capped
 */

/**
 * The parts of an examiner report (GET /_sandbox/sessions/{id}/report) the console writes itself.
 * @typedef {object} ExaminerReport
 * @property {Session} session
 * @property {'pass' | 'warn' | 'fail' | 'no-evidence'} verdict
 * @property {{ rule: string, severity: 'error' | 'warning' | 'info', count: number, message: string }[]} findings
 */

/**
 * A panel of the console: `show` runs each time its tab is opened.
 * @typedef {{ init?: () => void, show: () => Promise<void> }} Panel
 */

export {}
