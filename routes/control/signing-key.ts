import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { SIGNATURE_ALGORITHM } from '../../src/domain/examiner/signature.js'
import { notFound } from '../../src/errors.js'
import { SigningKeyQuery, SigningKeySchema } from '../../src/schemas/examiner.js'
import type { ControlOptions } from './options.js'

/**
 * The public key ended sessions' reports are signed with, for a partner team to fetch once and
 * check reports offline (`agency-sandbox verify report.json --key public.pem`). A public key is
 * no secret: like health, it needs no control token.
 */
export default async function signingKeyRoute (fastify: FastifyInstance, { config }: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get('/signing-key', {
    schema: {
      summary: 'The public key examiner reports are signed with (format=pem: the .pem file alone); 404 when the sandbox signs none (no SANDBOX_SIGNING_KEY)',
      querystring: SigningKeyQuery,
      response: { 200: SigningKeySchema }
    }
  }, async (request, reply) => {
    const key = config.signingKey
    if (key === undefined) throw notFound('This sandbox signs no reports: start it with SANDBOX_SIGNING_KEY (serve --signing-key FILE), an Ed25519 private key')
    if (request.query.format === 'pem') return reply.type('application/x-pem-file').send(key.publicKeyPem as never)
    return reply.send({ algorithm: SIGNATURE_ALGORITHM, keyId: key.keyId, publicKey: key.publicKeyPem })
  })
}
