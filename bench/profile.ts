import { readFileSync } from 'node:fs'
import { basename } from 'node:path'

/** Self time per function and per file of a V8 CPU profile (`node --cpu-prof`). */

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

export interface SelfTime {
  name: string
  location: string
  selfMs: number
  /** Share of the busy (non-idle) time. */
  selfPct: number
}

export interface ProfileSummary {
  /** The profiles summed up (file names in the output's profiles/). */
  files: string[]
  busyMs: number
  idleMs: number
  /** Self time by function. */
  functions: SelfTime[]
  /** Self time by file or package. */
  byFile: SelfTime[]
  /** Time spent in the package's own functions and everything they call (inclusive). */
  project: SelfTime[]
}

const IDLE = '(idle)'

/** A readable location: a path inside the package, or a package name, or a Node internal. */
function shorten (url: string, root: string): string {
  if (url === '') return '(native)'
  const path = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url
  const modules = path.lastIndexOf('/node_modules/')
  if (modules >= 0) return path.slice(modules + '/node_modules/'.length)
  return path.startsWith(root + '/') ? path.slice(root.length + 1) : path
}

type Totals = Map<string, { name: string; location: string; ms: number }>

function top (totals: Totals, busyMs: number, count: number): SelfTime[] {
  return [...totals.values()]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count)
    .map((t) => ({ name: t.name, location: t.location, selfMs: Math.round(t.ms), selfPct: busyMs > 0 ? (100 * t.ms) / busyMs : 0 }))
}

/** Self and inclusive times of one or more profiles (of the same program), added up. */
export function summarizeProfile (files: string[], root: string, count = 20): ProfileSummary {
  const totals = { busyMs: 0, idleMs: 0 }
  const byFunction: Totals = new Map()
  const byFile: Totals = new Map()
  const inclusive: Totals = new Map()
  for (const file of files) addProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, root, totals, byFunction, byFile, inclusive)
  return {
    files: files.map((f) => basename(f)),
    busyMs: Math.round(totals.busyMs),
    idleMs: Math.round(totals.idleMs),
    functions: top(byFunction, totals.busyMs, count),
    byFile: top(byFile, totals.busyMs, count),
    project: top(inclusive, totals.busyMs, count)
  }
}

function addProfile (
  profile: CpuProfile, root: string, totals: { busyMs: number; idleMs: number }, byFunction: Totals, byFile: Totals, inclusive: Totals
): void {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  // each sample lasts until the next one
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + Math.max(0, us))
  }
  // the package's own frames on each node's stack, root first, each once
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const own = `file://${root}/`
  const stacks = new Map<number, string[]>()
  const frames = new Map<string, { name: string; location: string }>()
  const frameKey = (id: number): string | null => {
    const frame = nodes.get(id)?.callFrame
    if (frame === undefined || !frame.url.startsWith(own) || frame.url.includes('/node_modules/')) return null
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName
    const location = `${shorten(frame.url, root)}:${frame.lineNumber + 1}`
    const key = `${name}\t${location}`
    frames.set(key, { name, location })
    return key
  }
  const stackOf = (id: number): string[] => {
    // climb to the nearest node already known, then fill in on the way back down
    const path: number[] = []
    let at: number | undefined = id
    while (at !== undefined && !stacks.has(at)) {
      path.push(at)
      at = parent.get(at)
    }
    let stack = at === undefined ? [] : stacks.get(at) ?? []
    for (let i = path.length - 1; i >= 0; i--) {
      const key = frameKey(path[i])
      if (key !== null && !stack.includes(key)) stack = [...stack, key]
      stacks.set(path[i], stack)
    }
    return stack
  }
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)?.callFrame
    if (frame === undefined) continue
    const ms = us / 1000
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName
    if (name === IDLE) {
      totals.idleMs += ms
      continue
    }
    totals.busyMs += ms
    const where = shorten(frame.url, root)
    const location = frame.url === '' ? where : `${where}:${frame.lineNumber + 1}`
    const fn = byFunction.get(`${name} ${location}`) ?? { name, location, ms: 0 }
    fn.ms += ms
    byFunction.set(`${name} ${location}`, fn)
    for (const key of stackOf(id)) {
      const entry = inclusive.get(key) ?? { ...(frames.get(key) ?? { name: key, location: '' }), ms: 0 }
      entry.ms += ms
      inclusive.set(key, entry)
    }
    const fileKey = frame.url === '' ? name : where
    const f = byFile.get(fileKey) ?? { name: fileKey, location: fileKey, ms: 0 }
    f.ms += ms
    byFile.set(fileKey, f)
  }
}
