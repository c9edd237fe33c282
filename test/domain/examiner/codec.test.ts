/**
 * The examiner's line format: a line's journal id can be replaced (a hosted report names each
 * request by its id in the shared journal), and nothing else of the request changes with it.
 */
import t from 'tap'
import { chunkHeader, encodeRequest, requestDecoder, withJournalId, type RequestRecord } from '../../../src/domain/examiner/codec.js'

const BASES = { atMs: 0, realMs: 0 }

t.test('withJournalId replaces the journal id alone', async (t) => {
  const record: RequestRecord = {
    atMs: 1_700_000_000_000,
    realMs: 1_700_000_000_005,
    elapsedMs: 1.25,
    method: 'GET',
    url: '/vendor/agency/1001/clients?version=4.0&note=a%09tab',
    operation: 'changedClients',
    status: 200,
    journalId: 7,
    clientId: 'abc',
    warnings: ['ignored query parameter note']
  }
  const decode = requestDecoder()
  const read = (line: string) => decode([chunkHeader(BASES), line].join('\n'), 1)[0]
  const line = encodeRequest(record, BASES)
  const replaced = read(withJournalId(line, 12_345))
  t.equal(replaced.journalId, 12_345, 'the new id')
  t.same({ ...replaced, journalId: 7 }, read(line), 'every other field as it was')
  t.equal(read(withJournalId(line, 0)).journalId, 0, 'and 0, for a request the shared journal no longer keeps')
})
