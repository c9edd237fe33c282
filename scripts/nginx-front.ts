import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../src/package-root.js'
import { freePort } from './free-port.js'

/**
 * The hosted recipe's nginx (hosted/nginx.conf) in front of two instances, for tests and
 * benchmarks: Debian's nginx in the foreground, one process, its files in a temporary folder, on
 * 127.0.0.1 at a free port. The recipe is used as it is, only its two servers and its port replaced.
 */

export const NGINX = '/usr/sbin/nginx'
const RECIPE = join(ROOT, 'hosted', 'nginx.conf')

export interface NginxFront {
  origin: string
  /** The recipe as run, to check that it named what was replaced. */
  recipe: string
  stop(): void
}

/** nginx routing by world to the instances at `a` and `b` (their origins); answers once its health route answers through it. */
export async function startNginxFront (a: string, b: string): Promise<NginxFront> {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is not installed (Debian's nginx package)`)
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-nginx-'))
  const port = await freePort()
  const recipe = readFileSync(RECIPE, 'utf8')
    .replace('server sandbox-a:8080', `server ${new URL(a).host}`)
    .replace('server sandbox-b:8080', `server ${new URL(b).host}`)
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace('http {', `http {\n  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`)
  writeFileSync(join(dir, 'nginx.conf'), `daemon off;\nmaster_process off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\n${recipe}`)
  const nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' })
  const stop = () => {
    nginx.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  const origin = `http://127.0.0.1:${port}`
  for (let i = 0; i < 50; i++) {
    if ((await fetch(`${origin}/_sandbox/health`).catch(() => undefined))?.status === 200) return { origin, recipe, stop }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  stop()
  throw new Error(`nginx did not answer at ${origin} within 5 s`)
}
