import createDebug from '../debug.js';
import { METER_NAME } from './metric-names.js';
import type { MeterLike, MeterProviderLike } from './otel-types.js';

const log = createDebug('rocketwire:metrics');

/**
 * The `metrics` option of Producer, PushConsumer, LitePullConsumer and SimpleConsumer. Without it
 * the client records to OpenTelemetry's global meter provider when `@opentelemetry/api` is
 * installed and a provider is registered there; otherwise it records nothing and does no work per
 * message. `false` turns metrics off even with a global provider.
 * @category Metrics and trace
 */
export type MetricsOptions =
  | false
  | {
      /**
       * Records to this provider instead of the global one (e.g. the SDK's `new MeterProvider({ readers })`).
       * @default undefined (OpenTelemetry's global meter provider)
       */
      meterProvider?: MeterProviderLike;
    };

/** The option as the clients' option interfaces carry it. */
export interface MetricsOption {
  /**
   * OpenTelemetry metrics of the RocketMQ 5.x clients (lib/metrics/README.md); false turns them off.
   * @default undefined (the global meter provider, when `@opentelemetry/api` is installed)
   */
  metrics?: MetricsOptions;
}

/** Checks the option; answers the option at fault and why, or null (the client throws its own option error). */
export function checkMetricsOptions(o: unknown): { option: string; message: string } | null {
  if (o === undefined || o === false) return null;
  if (o === null || typeof o !== 'object')
    return { option: 'metrics', message: `must be false or { meterProvider? }, got ${String(o)}` };
  const p = (o as { meterProvider?: unknown }).meterProvider;
  if (p === undefined) return null;
  if (p === null || typeof p !== 'object' || typeof (p as { getMeter?: unknown }).getMeter !== 'function') {
    return {
      option: 'metrics.meterProvider',
      message: 'must be an OpenTelemetry MeterProvider (an object with getMeter())',
    };
  }
  return null;
}

interface OtelApi {
  metrics: { getMeterProvider(): MeterProviderLike };
  createNoopMeter(): unknown;
}

let api: Promise<OtelApi | null> | null = null;

/**
 * `@opentelemetry/api`, loaded once on first use; null when it is not installed (an optional peer
 * dependency) or fails to load. Never throws.
 */
function loadApi(): Promise<OtelApi | null> {
  api ??= import('@opentelemetry/api').then(
    (m) => m as unknown as OtelApi,
    (err: unknown) => {
      log('@opentelemetry/api is not available, metrics are off: %s', (err as Error)?.message ?? err);
      return null;
    },
  );
  return api;
}

/**
 * The meter a client records to, or null when metrics are off: the option's provider, else the
 * global one unless it is the API's no-op provider (nothing registered), so that a client with no
 * provider set builds no instrument and takes no clock reading per message. Decided once, at the
 * client's start: a global provider registered later is not seen by clients already started.
 */
export async function resolveMeter(options: MetricsOptions | undefined): Promise<MeterLike | null> {
  if (options === false) return null;
  try {
    const given = options?.meterProvider;
    if (given) return given.getMeter(METER_NAME);
    const otel = await loadApi();
    if (!otel) return null;
    const meter = otel.metrics.getMeterProvider().getMeter(METER_NAME);
    return meter === otel.createNoopMeter() ? null : meter;
  } catch (err) {
    log('metrics are off: the meter provider failed: %s', (err as Error)?.message ?? err);
    return null;
  }
}
