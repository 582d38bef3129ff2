import { Registry, type OpenMetricsContentType } from 'prom-client';

/** A registered metric as the registry reads it (prom-client's typings leave out `get`). */
interface Registered {
  name: string;
  help: string;
  type: string;
  get(): Promise<Formatted> | Formatted;
}
type Formatted = { name: string } & Record<string, unknown>;
type Registrable = Parameters<Registry['registerMetric']>[0];

/** What `GET /metrics` answers: its content type and its text. */
export interface Scrape {
  contentType: string;
  text: string;
}

/**
 * True when an Accept header asks for OpenMetrics (Prometheus does when exemplar storage or native
 * scraping protocols are on: `application/openmetrics-text;version=1.0.0,…,text/plain;q=0.5`).
 * A media type listed with `q=0` is refused, not asked for.
 */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes('application/openmetrics-text')) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    return type === 'application/openmetrics-text' && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

/**
 * A metric of `source` seen through an OpenMetrics registry. prom-client's registry renames a
 * counter it formats as OpenMetrics (it drops `_total` from the object's `name`, for good), so the
 * OpenMetrics registry is handed these stand-ins and the registered metrics keep their names for
 * the classic format.
 */
function openMetricsView(m: Registered): Registrable {
  const read = (): Promise<Formatted> | Formatted => {
    const withString = m as unknown as { getForPromString?: () => Promise<Formatted> };
    return typeof withString.getForPromString === 'function' ? withString.getForPromString() : m.get();
  };
  const view = {
    name: m.name,
    help: m.help,
    type: m.type,
    async get(): Promise<Formatted> {
      return { ...(await read()), name: view.name };
    },
    reset: () => undefined,
  };
  return view as unknown as Registrable;
}

/**
 * The exposition of one registry in either format: classic Prometheus text (no exemplars), or
 * OpenMetrics (with the histograms' exemplars) when the scraper's Accept header asks for it. The
 * OpenMetrics registry is made per such scrape from the registered metrics (a few dozen objects),
 * so metrics registered later are in it too.
 */
export class Exposition {
  constructor(private readonly registry: Registry) {}

  async scrape(accept: string | undefined): Promise<Scrape> {
    if (!wantsOpenMetrics(accept)) return { contentType: this.registry.contentType, text: await this.registry.metrics() };
    const open = new Registry<OpenMetricsContentType>();
    open.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    for (const m of this.registry.getMetricsAsArray()) open.registerMetric(openMetricsView(m as unknown as Registered));
    return { contentType: open.contentType, text: await open.metrics() };
  }
}
