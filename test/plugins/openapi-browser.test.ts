import t from 'tap'
import { startServer } from '../../src/server.js'
import { chromiumPath, launchBrowser, NO_BROWSER } from '../helpers/browser.js'
import { testConfig } from '../helpers/app.js'

const executablePath = chromiumPath()

t.test('Swagger UI: "Try it out" on the 4.0 agencies operation, with the demo credentials, gets the 4.0 answer', { skip: executablePath === undefined ? NO_BROWSER : false }, async (t) => {
  if (executablePath === undefined) return
  const server = await startServer(testConfig({ port: 0 }))
  t.teardown(() => server.close())
  const context = await launchBrowser(executablePath, t.teardown.bind(t))
  const page = context.pages()[0] ?? await context.newPage()
  page.setDefaultTimeout(15_000)
  await page.goto(`${server.url}/docs/`)

  // Basic auth declared by the document: the Authorize dialog takes the Client Id and Secret.
  await page.locator('button.authorize').first().click()
  await page.locator('.auth-container input[type=text]').first().fill('abc')
  await page.locator('.auth-container input[type=password]').first().fill('123')
  await page.locator('.auth-btn-wrapper button.authorize').first().click()
  await page.locator('.auth-btn-wrapper button.btn-done').first().click()

  t.ok(await page.locator('h3.opblock-tag', { hasText: 'agencies' }).count() > 0, 'operations are grouped by tag')
  const operation = page.locator('.opblock', { has: page.locator('[data-path="/vendor/agencies"]') }).first()
  await operation.locator('.opblock-summary').click()
  await operation.locator('button.try-out__btn').click()
  await operation.locator('button.execute').click()
  const answer = operation.locator('.live-responses-table .response-col_description pre').first()
  await answer.waitFor()
  const agencies = JSON.parse(await answer.innerText()) as unknown[]
  t.ok(Array.isArray(agencies) && agencies.length > 0, 'a listing came back')
  t.same(Object.keys(agencies[0] as object).sort(), ['agencyId', 'scopes'], 'the 4.0 shape (version 1 answers bare ids)')
  const url = await operation.locator('.request-url pre').first().innerText()
  t.match(url, /version=4\.0/, 'the request carried version=4.0')
})
