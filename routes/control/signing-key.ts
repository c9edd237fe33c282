import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { SIGNATURE_ALGORITHM } from '../../src/domain/examiner/signature.js'
import { notFound } from '../../src/errors.js'
import { SigningKeyQuery, SigningKeySchema, SigningKeysSchema, type SigningKeysView } from '../../src/schemas/examiner.js'
import type { ControlOptions } from './options.js'

/**
 * The public keys ended sessions' reports are signed with, for a partner team or a vendor to
 * fetch once and check reports offline (`agency-sandbox verify report.json --key keys.pem`): the
 * current one, and the list of the current and previous ones, so that reports signed before a
 * rotation still verify (docs/key-custody.md). A public key is no secret: like health, they need
 * no control token.
 */
export default async function signingKeyRoute (fastify: FastifyInstance, { config }: ControlOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { signingKey, previousSigningKeys, signerName } = config
  const list: SigningKeysView = {
    signer: signerName,
    current: signingKey?.keyId ?? null,
    keys: [
      ...(signingKey === undefined ? [] : [{ algorithm: SIGNATURE_ALGORITHM, keyId: signingKey.keyId, publicKey: signingKey.publicKeyPem, status: 'current' as const }]),
      ...previousSigningKeys.map((key) => ({ algorithm: SIGNATURE_ALGORITHM, keyId: key.keyId, publicKey: key.publicKeyPem, status: 'previous' as const }))
    ]
  }

  app.get('/signing-key', {
    schema: {
      summary: 'The public key examiner reports are signed with (format=pem: the .pem file alone); 404 when the sandbox signs none (no SANDBOX_SIGNING_KEY)',
      querystring: SigningKeyQuery,
      response: { 200: SigningKeySchema }
    }
  }, async (request, reply) => {
    if (signingKey === undefined) throw notFound('This sandbox signs no reports: start it with SANDBOX_SIGNING_KEY (serve --signing-key FILE), an Ed25519 private key')
    if (request.query.format === 'pem') return reply.type('application/x-pem-file').send(signingKey.publicKeyPem as never)
    return reply.send({ algorithm: SIGNATURE_ALGORITHM, keyId: signingKey.keyId, publicKey: signingKey.publicKeyPem, signer: signerName })
  })

  app.get('/signing-keys', {
    schema: {
      summary: 'Every public key this sandbox\'s reports may be signed with: the current key and the previous ones (format=pem: all of them in one .pem file, for verify --key)',
      querystring: SigningKeyQuery,
      response: { 200: SigningKeysSchema }
    }
  }, async (request, reply) => {
    if (request.query.format === 'pem') return reply.type('application/x-pem-file').send(list.keys.map((key) => key.publicKey).join('') as never)
    return reply.send(list)
  })
}
