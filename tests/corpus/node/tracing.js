// The corpus' Node tracing: the real Node SDK, exporting every span at once through the real
// OTLP/protobuf exporter to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
const { SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');

function startTracing(serviceName) {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  return provider;
}

module.exports = { startTracing };
