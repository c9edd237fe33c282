/**
 * Vendor reads sent to two instances and compared byte for byte (status, Content-Type, Denied
 * and body): the proof that an imported fixture answers as its upstream.
 */

export interface Side { url: string; auth: string }

export const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64')

export interface Read { method: 'GET' | 'POST'; path: string; body?: unknown }

export async function answer (side: Side, read: Read): Promise<string> {
  const res = await fetch(side.url + read.path, {
    method: read.method,
    headers: { authorization: side.auth, ...(read.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: read.body === undefined ? undefined : JSON.stringify(read.body)
  })
  const text = await res.text()
  return `${res.status} ${res.headers.get('content-type') ?? ''} denied=${res.headers.get('denied') ?? ''}\n${text}`
}

/** The reads whose answers differ (at most `max`, with both answers cut to 300 characters). */
export async function mismatches (a: Side, b: Side, reads: Read[], max = 5): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < reads.length; i += 32) {
    const chunk = reads.slice(i, i + 32)
    const answers = await Promise.all(chunk.map(async (r) => Promise.all([answer(a, r), answer(b, r)])))
    answers.forEach(([x, y], k) => {
      if (x !== y && out.length < max) out.push(`${chunk[k].method} ${chunk[k].path}\n  upstream: ${x.slice(0, 300)}\n  imported: ${y.slice(0, 300)}`)
    })
  }
  return out
}

const v = (version: string, query = '') => {
  const q = [version === '1' ? '' : `version=${version}`, query].filter((s) => s !== '').join('&')
  return q === '' ? '' : `?${q}`
}

export interface AgencyReads {
  agencyId: number
  offices: number[]
  /** Live client numbers to read one by one (all, or a sample). */
  clients: number[]
  /** asOf values to list changed and deleted ids with. */
  asOfs: string[]
  policyNumbers: string[]
  users: boolean
}

const ALL = 'Details,People,Contacts,Claims,Policies,Invoices'

/** Every vendor read of the agency this proof covers. */
export function readsOf (a: AgencyReads): Read[] {
  const A = `/vendor/agency/${a.agencyId}`
  const reads: Read[] = []
  const get = (path: string) => reads.push({ method: 'GET', path })
  for (const version of ['4.0', '3.0', '1']) {
    get(`${A}/offices${v(version)}`)
    get(`${A}/clients${v(version)}`)
    get(`${A}/clients${v(version, 'deleted=true')}`)
    for (const asOf of a.asOfs) {
      get(`${A}/clients${v(version, `asOf=${encodeURIComponent(asOf)}`)}`)
      get(`${A}/clients${v(version, `asOf=${encodeURIComponent(asOf)}&deleted=true`)}`)
    }
    for (const office of a.offices) {
      get(`${A}/clients${v(version, `officeId=${office}`)}`)
      get(`${A}/clients${v(version, `officeId=${office}&deleted=true`)}`)
    }
    // 4.0 with every group; 3.0 with a subset, which tells an agency that ignores include (its flag) apart
    const include = { '4.0': `include=${ALL}`, '3.0': 'include=Details,Invoices', 1: '' }[version]
    for (const n of a.clients) get(`${A}/client/${n}${v(version, include)}`)
  }
  if (a.users) get(`${A}/users?version=4.0`)
  for (let i = 0; i < a.clients.length; i += 200) {
    const numbers = a.clients.slice(i, i + 200)
    reads.push({ method: 'POST', path: `${A}/clients?version=4.0&include=${ALL}`, body: { clientNumbers: numbers } })
    reads.push({ method: 'POST', path: `${A}/clients?version=3.0`, body: { clientNumbers: numbers } })
    reads.push({ method: 'POST', path: `${A}/clients`, body: numbers })
  }
  for (const p of a.policyNumbers) {
    get(`${A}/clients/search?version=4.0&include=${ALL}&policyNumber=${encodeURIComponent(p)}`)
    get(`${A}/clients/search?version=3.0&policyNumber=${encodeURIComponent(p)}`)
  }
  return reads
}

export const agencyListings: Read[] = ['4.0', '3.0', '1'].map((version) => ({ method: 'GET', path: `/vendor/agencies${v(version)}` }))

export interface StateClient { clientNumber: number; deleted?: boolean; details: { modified: string; officeId: number }; policies?: Array<{ policyNumber: string }> }
export interface StateAgency { agencyId: number; offices: Array<{ officeId: number }>; clients: StateClient[] }

/**
 * The reads for an agency from the upstream's own state (control API): asOf at each deleted
 * client's deletion time, a millisecond before and after, and spread over the live clients'
 * times; a few policy numbers.
 */
export function readsFromState (agency: StateAgency, users: boolean, sample?: number, maxDeleted = Infinity): Read[] {
  const live = agency.clients.filter((c) => c.deleted !== true)
  const deleted = agency.clients.filter((c) => c.deleted === true).slice(0, maxDeleted)
  const asOfs: string[] = []
  for (const d of deleted) {
    const t = Date.parse(d.details.modified)
    for (const dt of [-1, 0, 1]) asOfs.push(new Date(t + dt).toISOString())
  }
  const times = live.map((c) => c.details.modified).sort()
  for (const q of [0.1, 0.5, 0.9]) if (times.length > 0) asOfs.push(times[Math.floor(q * (times.length - 1))])
  const step = sample === undefined ? 1 : Math.max(1, Math.floor(live.length / sample))
  const clients = live.filter((_, i) => i % step === 0).map((c) => c.clientNumber)
  const policyNumbers = live.flatMap((c) => (c.policies ?? []).map((p) => p.policyNumber)).filter((_, i) => i % 97 === 0).slice(0, 4)
  return readsOf({ agencyId: agency.agencyId, offices: agency.offices.map((o) => o.officeId), clients, asOfs, policyNumbers, users })
}
