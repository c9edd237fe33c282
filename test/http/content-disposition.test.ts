import t from 'tap'
import { validateHeaderValue } from 'node:http'
import { MAX_DOWNLOAD_NAME, attachmentDisposition, downloadName } from '../../src/http/content-disposition.js'
import { AGENCY, DEMO, build, demoFixture } from '../helpers/app.js'
import { attachment, b64 } from '../helpers/writes.js'

/** Reads a Content-Disposition back as a client would: the ASCII fallback and the UTF-8 name. */
function parse (header: string): { fallback: string; name: string } {
  const match = /^attachment; filename="([^"\\]*)"; filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]*)$/.exec(header)
  if (match === null) return { fallback: '', name: `(not an RFC 6266 attachment disposition: ${header})` }
  return { fallback: match[1], name: decodeURIComponent(match[2]) }
}

t.test('attachmentDisposition: any name gives a valid header with the UTF-8 name and an ASCII fallback', async (t) => {
  const cases: [input: string, name: string, fallback: string][] = [
    ['Résumé.pdf', 'Résumé.pdf', 'R_sum_.pdf'],
    ['报告.pdf', '报告.pdf', '__.pdf'],
    ['a"b\\c.txt', 'a"b\\c.txt', 'a_b_c.txt'],
    ['line\r\nbreak.txt', 'line__break.txt', 'line__break.txt'],
    ['tab\there\u0000\u007f\u0085.txt', 'tab_here___.txt', 'tab_here___.txt'],
    ['party 🎉 plan.docx', 'party 🎉 plan.docx', 'party _ plan.docx'],
    ['100% sure (final).pdf', '100% sure (final).pdf', '100_ sure (final).pdf'],
    ["it's *quoted*; a=b.pdf", "it's *quoted*; a=b.pdf", "it's *quoted*; a=b.pdf"],
    ['.pdf', 'attachment.pdf', 'attachment.pdf'],
    ['   .pdf', 'attachment.pdf', 'attachment.pdf'],
    ['', 'attachment', 'attachment'],
    ['no extension', 'no extension', 'no extension'],
    ['lone \ud800 surrogate.txt', 'lone \ufffd surrogate.txt', 'lone _ surrogate.txt']
  ]
  for (const [input, name, fallback] of cases) {
    const header = attachmentDisposition(input)
    t.doesNotThrow(() => validateHeaderValue('content-disposition', header), `${JSON.stringify(input)}: Node accepts the header`)
    t.match(header, /^[\u0020-\u007e]+$/, `${JSON.stringify(input)}: printable ASCII only`)
    t.same(parse(header), { fallback, name }, JSON.stringify(input))
  }
})

t.test('long names are shortened by character, keeping their extension', async (t) => {
  const long = downloadName('报'.repeat(5000) + '.pdf')
  t.equal([...long].length, MAX_DOWNLOAD_NAME)
  t.ok(long.endsWith('报.pdf'))
  const emoji = downloadName('🎉'.repeat(300) + '.png')
  t.equal([...emoji].length, MAX_DOWNLOAD_NAME, 'no emoji is cut in half')
  t.equal(Buffer.from(emoji, 'utf8').toString('utf8'), emoji, 'no lone surrogate')
  t.ok(attachmentDisposition('x'.repeat(100_000) + '.pdf').length < 2 * 1024, 'the header stays small')
})

t.test('an attachment with any file name downloads (200, the same bytes, the name in filename*)', async (t) => {
  const app = await build(t)
  const client = demoFixture().agencies.find((a) => a.agencyId === AGENCY.main)!.clients.find((c) => !c.deleted)!
  const url = `/vendor/agency/${AGENCY.main}/client/${client.clientNumber}/attachment?version=4.0`
  const names: [fileName: string, served: string][] = [
    ['Résumé', 'Résumé.pdf'],
    ['报告', '报告.pdf'],
    ['a"b\\c', 'a"b\\c.pdf'],
    ['line\r\nbreak', 'line__break.pdf'],
    ['party 🎉', 'party 🎉.pdf'],
    ['\u0007bell\u009b', '_bell_.pdf']
  ]
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  for (const [i, [fileName, served]] of names.entries()) {
    const bytes = Buffer.concat([Buffer.from('%PDF-'), Buffer.from(Array.from({ length: 4096 + i }, (_, j) => (j * 31 + i) % 256))])
    const file = attachment(bytes, { FileName: b64(fileName), FileExt: 'pdf' })
    const upload = await app.inject({ method: 'POST', url, headers: { authorization: DEMO, ...file.headers }, payload: file.payload })
    t.equal(upload.statusCode, 200, `${JSON.stringify(fileName)} uploads: ${upload.body}`)
    const path = `/_sandbox/agencies/${AGENCY.main}/attachments/${file.headers.RefId}/content`
    const res = await app.inject({ url: path })
    t.equal(res.statusCode, 200, `${JSON.stringify(fileName)} downloads: ${res.body.slice(0, 200)}`)
    t.ok(res.rawPayload.equals(bytes), `${JSON.stringify(fileName)}: the same bytes`)
    t.equal(parse(String(res.headers['content-disposition'])).name, served, `${JSON.stringify(fileName)}: the name in filename*`)
    // and over a real socket, as a browser's download button would fetch it
    const real = await fetch(new URL(path, address))
    t.equal(real.status, 200, `${JSON.stringify(fileName)}: 200 over HTTP`)
    t.ok(Buffer.from(await real.arrayBuffer()).equals(bytes), `${JSON.stringify(fileName)}: the same bytes over HTTP`)
    t.equal(parse(real.headers.get('content-disposition') ?? '').name, served)
  }
})
