import t from 'tap'
import { gzipSync } from 'node:zlib'
import { contentSha256, gunzipAttachment, MAX_ATTACHMENT } from '../../src/domain/attachments.js'
import { attachmentCommand, attachmentTask, normalizeFileExt } from '../../src/versions/attachment-headers.js'
import { ApiError } from '../../src/errors.js'
import { ATTACHMENT_TYPES } from '../../src/schemas/writes.js'

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')

/** The single field error of the 400 ApiError `fn` throws, or a description of what happened instead. */
function fieldErrorOf (fn: () => unknown): unknown {
  try {
    return { returned: fn() }
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400 || e.errors?.length !== 1) return { threw: String(e) }
    return e.errors[0]
  }
}

/** The status and field names of the ApiError `fn` throws. */
function failureOf (fn: () => unknown): { status: number, fields: string[] } | { returned: unknown } {
  try {
    return { returned: fn() }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { status: e.status, fields: (e.errors ?? []).map((f) => f.field) }
  }
}

t.test('normalizeFileExt', async (t) => {
  t.equal(normalizeFileExt('.PDF', '4.0'), 'pdf')
  t.equal(normalizeFileExt('pdf', '4.0'), 'pdf')
  t.equal(normalizeFileExt('Msg', '3.0'), 'msg')
  t.equal(normalizeFileExt('txt', '1'), 'txt')
  t.equal(normalizeFileExt('.JPEG', '1'), 'jpeg')
  const rejects = (ext: string, version: '4.0' | '3.0' | '1') =>
    t.same(fieldErrorOf(() => normalizeFileExt(ext, version)),
      { field: 'FileExt', message: `must be one of ${ATTACHMENT_TYPES[version].join(', ')}` }, `${ext} rejected in ${version}`)
  rejects('txt', '4.0')
  rejects('txt', '3.0')
  rejects('eml', '1')
  rejects('exe', '4.0')
  rejects('exe', '1')
  rejects('..pdf', '4.0')
  rejects('', '4.0')
})

/** What an attachment body refused answers (or what it gave). */
async function gunzipFailureOf (body: unknown): Promise<{ status: number, fields: string[] } | { returned: unknown }> {
  try {
    return { returned: await gunzipAttachment(body) }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { status: e.status, fields: (e.errors ?? []).map((f) => f.field) }
  }
}

t.test('gunzipAttachment: gzip only, at most 5 MiB once decompressed, complete streams', async (t) => {
  const file = Buffer.from('%PDF-1.4 a file')
  t.ok((await gunzipAttachment(gzipSync(file))).equals(file), 'the decompressed bytes')
  t.equal((await gunzipAttachment(gzipSync(Buffer.alloc(MAX_ATTACHMENT, 1)))).length, MAX_ATTACHMENT, 'exactly 5 MiB is accepted')
  t.match(await gunzipFailureOf(gzipSync(Buffer.alloc(MAX_ATTACHMENT + 1))), { status: 400, fields: ['(body)'] }, 'one byte more is not (400, as the live service answers)')
  for (const [name, body] of [['plain bytes', file], ['one byte', Buffer.from([0x1f])], ['no body', undefined], ['text', 'x']] as const) {
    t.match(await gunzipFailureOf(body), { status: 415 }, `${name}: not gzip`)
  }
  const gz = gzipSync(file)
  t.match(await gunzipFailureOf(gz.subarray(0, gz.length - 4)), { status: 400, fields: ['(body)'] }, 'a truncated stream')
})

t.test('contentSha256: the content\'s SHA-256, in hex', async (t) => {
  t.equal(await contentSha256(Buffer.from('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
})

t.test('attachmentTask: no Task header, or every required one', async (t) => {
  const task = { taskassignedto: 'Producer', taskdescription: b64('Review the file'), taskduedate: '2026-12-01T00:00:00Z', tasktitle: b64('Review') }
  t.equal(attachmentTask({}), undefined, 'no task')
  t.same(attachmentTask(task), { assignedToRole: 'Producer', description: 'Review the file', dueDate: '2026-12-01T00:00:00Z', title: 'Review' })
  t.same(attachmentTask({ ...task, taskcategory: b64('Docs'), taskassignedtoemail: 'a@example.com' }),
    { assignedToRole: 'Producer', assignedToEmail: 'a@example.com', category: 'Docs', description: 'Review the file', dueDate: '2026-12-01T00:00:00Z', title: 'Review' })
  t.match(failureOf(() => attachmentTask({ tasktitle: b64('Review') })),
    { status: 400, fields: ['TaskAssignedTo', 'TaskDescription', 'TaskDueDate'] }, 'one Task header makes the others required')
  t.match(failureOf(() => attachmentTask({ taskassignedto: '', taskdescription: '', taskduedate: '', tasktitle: '' })),
    { status: 400, fields: ['TaskAssignedTo', 'TaskDescription', 'TaskDueDate', 'TaskTitle'] }, 'empty values are missing values')
  t.match(failureOf(() => attachmentTask({ ...task, taskassignedto: 'Boss', taskduedate: '2026-13-45T00:00:00Z' })),
    { status: 400, fields: ['TaskAssignedTo', 'TaskDueDate'] }, 'role and due date at once')
  t.same(attachmentTask({ ...task, taskassignedto: 'Csr' })?.assignedToRole, 'Csr', 'CSR may be spelled Csr')
  t.match(failureOf(() => attachmentTask({ ...task, tasktitle: '***' })), { status: 400, fields: ['TaskTitle'] }, 'base64 values')
})

t.test('attachmentCommand: headers decoded and checked in order, the 4.0 command out', async (t) => {
  const headers = {
    channel: '33',
    desc: b64('Signed application'),
    fileext: '.PDF',
    filename: b64('application signée'),
    lognote: b64('Received'),
    refid: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
    ts: '2026-11-20T10:00:00Z'
  }
  const content = Buffer.from('%PDF-x')
  t.same(attachmentCommand(headers, content, '4.0'), {
    refId: headers.refid,
    channel: 33,
    ts: headers.ts,
    description: 'Signed application',
    fileName: 'application signée',
    fileExt: 'pdf',
    logNote: 'Received',
    content
  })
  t.match(attachmentCommand({ ...headers, policyid: 'p' }, content, '3.0'), { policyId: 'p' })
  t.match(failureOf(() => attachmentCommand({ ...headers, desc: '***', fileext: 'exe' }, content, '4.0')), { status: 400, fields: ['FileExt'] }, 'FileExt first (the signature needs it)')
  t.match(failureOf(() => attachmentCommand({ ...headers, desc: '***' }, Buffer.from('not a pdf'), '4.0')), { status: 400, fields: ['FileExt'] }, 'the signature before Desc')
  t.match(failureOf(() => attachmentCommand({ ...headers, desc: '***' }, content, '4.0')), { status: 400, fields: ['Desc'] }, 'then Desc')
  t.match(failureOf(() => attachmentCommand({ ...headers, fileext: 'txt' }, content, '4.0')), { status: 400, fields: ['FileExt'] }, 'txt is version 1 only')
  t.match(failureOf(() => attachmentCommand({ ...headers, tasktitle: b64('t') }, content, '4.0')), { status: 400, fields: ['TaskAssignedTo', 'TaskDescription', 'TaskDueDate'] })
})
