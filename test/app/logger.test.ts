import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import { childLoggerFactory } from '../../src/logger.js'
import { OneLineRequestLog } from '../../src/plugins/request-log.js'

const ORDER = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']

/** A logger recording its lines and the children made from it. */
function recorder (level: string, bindings: Record<string, unknown> = {}, record = { lines: [] as unknown[][], children: 0 }) {
  const logger = {
    level,
    isLevelEnabled: (l: string) => ORDER.indexOf(l) >= ORDER.indexOf(logger.level),
    child (more: Record<string, unknown>) {
      record.children++
      return recorder(logger.level, { ...bindings, ...more }, record).logger
    },
    silent () {}
  } as Record<string, unknown> & { level: string; isLevelEnabled(l: string): boolean }
  for (const l of ORDER) logger[l] = (...args: unknown[]) => { if (logger.isLevelEnabled(l)) record.lines.push([l, bindings, ...args]) }
  return { logger: logger as unknown as FastifyBaseLogger, record }
}

const make = (parent: FastifyBaseLogger, bindings: Record<string, unknown>) =>
  (childLoggerFactory as unknown as (l: FastifyBaseLogger, b: Record<string, unknown>, o: object) => FastifyBaseLogger)(parent, bindings, {})

t.test('at info and below every request gets its child logger at once', async (t) => {
  const { logger, record } = recorder('info')
  const log = make(logger, { reqId: 'req-1' })
  t.equal(record.children, 1)
  log.info('incoming request')
  t.same(record.lines, [['info', { reqId: 'req-1' }, 'incoming request']])
})

t.test('above info the child is made on the first line logged, and carries the request id', async (t) => {
  const { logger, record } = recorder('warn')
  const log = make(logger, { reqId: 'req-2' })
  log.info('incoming request')
  log.debug({ x: 1 }, 'detail')
  t.equal(record.children, 0, 'lines below the level make no child')
  t.same(record.lines, [])
  t.equal(log.level, 'warn')
  log.error({ err: 'boom' }, 'failed')
  log.warn('slow')
  t.equal(record.children, 1, 'one child, made once')
  t.same(record.lines, [['error', { reqId: 'req-2' }, { err: 'boom' }, 'failed'], ['warn', { reqId: 'req-2' }, 'slow']])
  log.child({ part: 'db' }).fatal('gone')
  t.same(record.lines.at(-1), ['fatal', { reqId: 'req-2', part: 'db' }, 'gone'])
  log.level = 'debug'
  log.debug('now shown')
  t.same(record.lines.at(-1), ['debug', { reqId: 'req-2' }, 'now shown'], 'a level set on the request logger applies to it')
})

t.test('above info the request logger says which levels it logs, so no line is built for nothing', async (t) => {
  const { logger, record } = recorder('warn')
  const log = make(logger, { reqId: 'req-3' }) as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }
  t.equal(log.isLevelEnabled?.('info'), false, 'info is not logged')
  t.equal(log.isLevelEnabled?.('warn'), true, 'warn is')
  t.equal(record.children, 0, 'asking makes no child')
  log.level = 'debug'
  t.equal(log.isLevelEnabled?.('debug'), true, 'a level set on the request logger answers for it')
})

t.test("a request logger whose child cannot say its levels (a partner's own logger) answers as its parent does", async (t) => {
  const lines: unknown[][] = []
  const child = { error: (...args: unknown[]) => { lines.push(args) } }
  const parent = { level: 'warn', isLevelEnabled: (l: string) => ORDER.indexOf(l) >= ORDER.indexOf('warn'), child: () => child } as unknown as FastifyBaseLogger
  const log = make(parent, { reqId: 'req-4' }) as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }
  log.error('failed')
  t.same(lines, [['failed']], 'the child is made')
  t.equal(log.isLevelEnabled?.('info'), false, 'info: as the parent says')
  t.equal(log.isLevelEnabled?.('error'), true)
})

t.test('a completion step that throws is logged as the request\'s error, and the steps after it still run', async (t) => {
  const { logger, record } = recorder('info')
  const requestLog = new OneLineRequestLog()
  const ran: string[] = []
  requestLog.journal = () => {
    ran.push('journal')
    throw new Error('journal broke')
  }
  requestLog.operations = () => { ran.push('count') }
  const request = { log: logger, url: '/vendor/agency/1/clients?version=4.0', method: 'GET', params: { agencyId: '1' }, headers: {}, world: undefined, callerTenant: undefined }
  const reply = { statusCode: 200, elapsedTime: 1.5 }
  // Fastify calls this from the response's 'finish' listener: a throw there would end the process
  t.doesNotThrow(() => requestLog.requestCompleted(null, request as never, reply as never))
  t.same(ran, ['journal', 'count'])
  t.equal(record.lines.length, 1)
  const [level, , line] = record.lines[0] as [string, unknown, { err?: Error, status: number }]
  t.equal(level, 'error')
  t.equal(line.err?.message, 'journal broke')
  t.equal(line.status, 200)
})
