#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { loadBootstrap, BootstrapError } from './config/bootstrap.js';
import { helpText, OPTION_TABLE, readOptions, type ServerOptions } from './config/options.js';
import { describeGatewayError } from './config/pipelines.js';
import { readFileSync } from 'node:fs';
import { parseConfig } from './config/schema.js';
import { GatewayError } from './errors/gateway-error.js';
import { buildPlan } from './plan/build-plan.js';
import { defaultProviders, ProviderRegistry } from './providers/registry.js';
import { HostGuard } from './security/host-guard.js';
import { redact, redactUrls } from './security/redact.js';
import { listenFailure } from './config/listen-error.js';
import { createGateway, type Gateway } from './gateway.js';
import { stopOnSignals } from './compose/server.js';
import { MASTER_KEY_ENV, PREVIOUS_MASTER_KEYS_ENV } from './security/master-key.js';
import { isPrimary, runPrimary } from './cluster.js';
import { MemoryVersionedStore } from './state/memory/versioned-store.js';

/**
 * How far V8 lets the old generation grow over the live size before the next full GC. V8's own
 * heuristics allow up to 4x on a small heap, so a gateway whose live set is ~30 MB swung between
 * ~125 and ~165 MB of RSS under sustained load depending on when the last full GC fell; 50% keeps it
 * flat (the `throughput` scenario reports RSS) at no measurable CPU cost. 0 leaves V8's heuristics. The flag is
 * read at each full GC, so setting it at start-up takes effect.
 */
function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

function fail(message: string): never {
  process.stderr.write(`sluice: ${redactUrls(message)}\n`);
  process.exit(2);
}

/** `sluice serve`'s flags, or undefined when it printed its help. */
function serveFlags(argv: string[]): Record<string, string | undefined> | undefined {
  let values: Record<string, string | boolean | undefined>;
  try {
    const parsed = parseArgs({
      args: argv,
      options: {
        ...Object.fromEntries(OPTION_TABLE.map((o) => [o.flag, { type: 'string' as const }])),
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    values = parsed.values;
  } catch (e) {
    fail(`${(e as Error).message}\n\n${helpText()}`);
  }
  if (values.help) {
    process.stdout.write(helpText());
    return undefined;
  }
  return values as Record<string, string | undefined>;
}

/** The options, then either the cluster's primary (--workers N) or one gateway serving until a signal. */
async function serve(argv: string[]): Promise<void> {
  const flags = serveFlags(argv);
  if (!flags) return;
  let options: ServerOptions;
  let gateway: Gateway;
  try {
    options = readOptions(flags, process.env);
    const bootstrap = options.bootstrap ? loadBootstrap(options.bootstrap) : undefined;
    if (options.workers > 1 && isPrimary()) {
      const hasKeys = options['api-keys'].length > 0 || (bootstrap?.api_keys.length ?? 0) > 0;
      runPrimary({
        workers: options.workers,
        hasKeys,
        shutdownTimeoutMs: options['shutdown-timeout'],
        log: (line) => process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), ...line })}\n`),
      });
      return;
    }
    limitHeapGrowth(options['heap-growth']);
    gateway = createGateway({
      options,
      bootstrap,
      masterKey: process.env[MASTER_KEY_ENV] || undefined,
      previousMasterKeys: process.env[PREVIOUS_MASTER_KEYS_ENV] || undefined,
    });
  } catch (e) {
    fail((e as Error).message);
  }
  const { host, port } = options;
  const addr = await gateway
    .listen()
    .catch((e: NodeJS.ErrnoException) => fail(e.syscall === 'listen' || e.syscall === 'getaddrinfo' ? listenFailure(e, host, port) : e.message));
  if (gateway.generatedKey) {
    // Printed once, to the terminal only: never through the logger.
    process.stderr.write(
      `\nNo gateway key configured (GATEWAY_API_KEYS or --bootstrap). Generated one for this run:\n\n  x-gateway-api-key: ${gateway.generatedKey}\n\n`,
    );
  }
  gateway.logger.info({ msg: 'listening', address: addr.address, port: addr.port, pid: process.pid });
  stopOnSignals(gateway, options['drain-delay']);
}

/** `sluice plan <config.json | inline JSON>`: print the plan a config compiles to (keys redacted). */
function plan(argv: string[]): void {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { bootstrap: { type: 'string' }, 'trusted-hosts': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  const source = positionals[0];
  if (values.help || !source) {
    process.stdout.write(
      [
        'Usage: sluice plan <config.json | \'{"inline":"json"}\'> [--bootstrap FILE] [--trusted-hosts LIST]',
        '',
        'Prints the plan tree a config compiles to, secrets redacted. Serves nothing.',
        '',
        '  --bootstrap FILE      the bootstrap file whose virtual keys the config names (unset environment',
        '                        variables it reads are filled in with placeholders)',
        '  --trusted-hosts LIST  as `sluice serve --trusted-hosts` (env GATEWAY_TRUSTED_HOSTS)',
        '',
      ].join('\n'),
    );
    return;
  }
  const filled: string[] = [];
  try {
    const text = source.trim().startsWith('{') ? source : readFileSync(source, 'utf8');
    const bootstrap = values.bootstrap ? loadBootstrap(values.bootstrap, planEnv(values.bootstrap, filled)) : undefined;
    const tree = buildPlan(parseConfig(JSON.parse(text)), {
      virtualKeys: new MemoryVersionedStore(Object.entries(bootstrap?.virtual_keys ?? {})),
      registry: new ProviderRegistry(defaultProviders(), bootstrap?.provider_base_urls),
      hostGuard: HostGuard.fromEnv(values['trusted-hosts'] ?? process.env.GATEWAY_TRUSTED_HOSTS),
    });
    // Redacted by kind (security/redact.ts): secret fields, check headers, URL userinfo.
    process.stdout.write(`${JSON.stringify(redact(tree), null, 2)}\n`);
  } catch (e) {
    let message = e instanceof GatewayError ? describeGatewayError('config', e) : (e as Error).message;
    if (e instanceof GatewayError && e.code === 'virtual_key_not_found') {
      message += values.bootstrap
        ? ` ${values.bootstrap} does not declare it.`
        : ' Virtual keys are declared in a bootstrap file: pass --bootstrap FILE (the one `sluice serve` uses).';
    }
    if (e instanceof BootstrapError && filled.length > 0) {
      message += `\n(unset environment variables ${filled.join(', ')} were filled in with placeholders)`;
    }
    fail(message);
  }
}

/**
 * The environment `sluice plan` reads a bootstrap file with. It serves nothing, so the secrets a
 * bootstrap takes from the environment (SLUICE_KEY, provider keys) need not be set: each `${NAME}`
 * without a default that is unset gets a placeholder (named in `filled`), which the plan prints
 * redacted like any secret. A `${NAME:-default}` still takes its default.
 */
function planEnv(file: string, filled: string[]): NodeJS.ProcessEnv {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return process.env; // loadBootstrap says why it cannot be read
  }
  const env = { ...process.env };
  for (const [, name] of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    if (!env[name!] && !filled.includes(name!)) {
      filled.push(name!);
      env[name!] = `unset-${name}-placeholder`;
    }
  }
  return env;
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'serve') {
  void serve(rest);
} else if (command === 'plan') {
  plan(rest);
} else if (command === 'quickstart' || command === 'demo') {
  // Loaded only here: nothing of the demo is imported by `sluice serve`.
  import('./demo/quickstart.js').then(
    (m) => m.quickstart(rest),
    (e: Error) => fail(e.message),
  ).catch((e: Error) => fail(e.message));
} else if (command === '--version' || command === '-v' || command === 'version') {
  // package.json sits one level above both src/main.ts and dist/main.js, and ships in the package.
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`sluice ${version}\n`);
} else if (command === 'experiment') {
  import('./experiment.js')
    .then((m) => m.experiment(rest, (l) => process.stderr.write(`sluice: ${l}\n`)))
    .then((code) => process.exit(code), (e: Error) => fail(e.message));
} else if (command === 'rotate-master-key') {
  import('./rotate-master-key.js')
    .then((m) => m.rotateMasterKey(rest, process.env, { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`sluice: ${redactUrls(l)}\n`) }))
    .then((code) => process.exit(code), (e: Error) => fail(e.message));
} else if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(
    [
      'Usage: sluice <command> [options]',
      '',
      'Commands:',
      '  serve              run the gateway (sluice serve --help)',
      '  plan               print the plan a config compiles to (sluice plan --help)',
      '  quickstart         the gateway in front of a built-in echo provider, with curl commands to try (alias: demo)',
      '  rotate-master-key  re-seal stored secrets under a new SLUICE_MASTER_KEY (sluice rotate-master-key --help)',
      '  experiment         run a routing experiment file and write its report, from a source checkout (sluice experiment --help)',
      '',
      '  -v, --version  print the version',
      '  -h, --help     show this help',
      '',
    ].join('\n'),
  );
} else {
  fail(`unknown command "${command}". Try: sluice serve --help`);
}
