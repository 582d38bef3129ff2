import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadBootstrap } from '../config/bootstrap.js';
import { readOptions } from '../config/options.js';
import { listenFailure } from '../config/listen-error.js';
import { createGateway } from '../gateway.js';
import { startFakeProvider } from './fake-provider.js';

/** The shipped saved configs and example bootstrap, found from this file (src/demo or dist/demo). */
const PIPELINES = fileURLToPath(new URL('../../pipelines', import.meta.url));
const BOOTSTRAP = `${PIPELINES}/bootstrap.example.yaml`;

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The curl commands printed at start: each one works as printed against this quickstart. */
export function quickstartCommands(url: string, key: string): { title: string; command: string }[] {
  const chat = (content: string, stream = false): string =>
    JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...(stream ? { stream: true } : {}) });
  const base = (path: string, headers: string[], body?: string, flags = '-s'): string =>
    [
      `curl ${flags} ${url}${path}`,
      `-H ${shellQuote(`x-gateway-api-key: ${key}`)}`,
      ...headers.map((h) => `-H ${shellQuote(h)}`),
      ...(body ? [`-H 'Content-Type: application/json'`, `-d ${shellQuote(body)}`] : []),
    ].join(' \\\n    ');
  return [
    { title: 'A chat completion through the "fallback" saved config (pipelines/fallback.json)', command: base('/v1/chat/completions', ['x-gateway-config: fallback'], chat('Hello from the fallback config')) },
    { title: 'The same with a virtual key of the example bootstrap', command: base('/v1/chat/completions', ['x-gateway-virtual-key: openai-primary'], chat('Hello')) },
    { title: 'A stream (SSE) through the "loadbalance" saved config', command: base('/v1/chat/completions', ['x-gateway-config: loadbalance'], chat('Stream this, please', true), '-sN') },
    {
      title: 'A tool call: given `tools`, the echo provider calls the first one (arguments from its schema); send the result back as a "tool" message and it answers with text',
      command: base(
        '/v1/chat/completions',
        ['x-gateway-virtual-key: openai-primary'],
        JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Weather in Paris, please' }],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
        }),
      ),
    },
    {
      title: 'A legacy text completion (/v1/completions)',
      command: base('/v1/completions', ['x-gateway-virtual-key: openai-primary'], JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' })),
    },
    { title: 'Embeddings', command: base('/v1/embeddings', ['x-gateway-virtual-key: openai-primary'], JSON.stringify({ model: 'text-embedding-3-small', input: 'hello' })) },
    { title: 'Models', command: base('/v1/models', ['x-gateway-virtual-key: openai-primary']) },
  ];
}

/**
 * `sluice quickstart`: a built-in echo provider on 127.0.0.1 (a free port) and the gateway in front of
 * it with pipelines/bootstrap.example.yaml, whose virtual keys reach the provider through
 * `provider_base_urls` (OPENAI_BASE_URL), an operator base URL on loopback, which the quickstart
 * trusts (127.0.0.1 in --trusted-hosts) as an operator would trust a private provider. Prints
 * curl commands that work as printed. No provider account, no flags; Ctrl-C stops both.
 */
export async function quickstart(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string' }, 'log-level': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      'Usage: sluice quickstart [--port 8787] [--log-level info]\n\nRuns the gateway in front of a built-in echo provider (no provider account needed)\nand prints curl commands to try. Ctrl-C stops it.\n',
    );
    return;
  }
  const provider = await startFakeProvider();
  const key = `sk-sluice-quickstart-${randomBytes(12).toString('hex')}`;
  // Always the demo provider and a dummy provider key: the quickstart never reaches a real provider.
  const env = { ...process.env, SLUICE_KEY: key, OPENAI_API_KEY: 'sk-quickstart-not-a-real-key', OPENAI_BASE_URL: provider.baseUrl };
  const bootstrap = loadBootstrap(BOOTSTRAP, env);
  const options = readOptions(
    { port: values.port ?? '8787', host: '127.0.0.1', pipelines: PIPELINES, 'log-level': values['log-level'] ?? 'info', 'trusted-hosts': '127.0.0.1' },
    {},
  );
  const gateway = createGateway({ options, bootstrap });
  const addr = await gateway.listen().catch(async (e: NodeJS.ErrnoException) => {
    await provider.close();
    throw new Error(e.syscall === 'listen' ? listenFailure(e, options.host, options.port, { port: 'pass --port N' }) : e.message);
  });
  const url = `http://127.0.0.1:${addr.port}`;
  const saved = readdirSync(PIPELINES)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5));
  const lines = [
    '',
    `Sluice quickstart: the gateway listens on ${url}, in front of a built-in echo provider at ${provider.baseUrl}.`,
    `No provider account needed. Bootstrap: pipelines/bootstrap.example.yaml (virtual keys openai-primary, openai-backup).`,
    `Gateway key for this run: ${key}`,
    '',
    ...quickstartCommands(url, key).flatMap((c) => [`# ${c.title}`, c.command, '']),
    `Other saved configs to try with x-gateway-config: ${saved.join(', ')}.`,
    'Ctrl-C stops the gateway and the echo provider.',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(1);
    stopping = true;
    gateway
      .shutdown()
      .then(() => provider.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
