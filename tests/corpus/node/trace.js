// The Node case of the corpus: a hand-instrumented Node agent (GenAI attributes set by hand, as
// a Node app without a GenAI instrumentation does) whose calls go out through the real
// @opentelemetry/instrumentation-http, exported by the real OTLP/protobuf exporter.
// Story: the model answers 429, the agent retries its chat call once and is answered.
// Env: LLM_URL (the fake server), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (where spans go).
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
const api = require('@opentelemetry/api');
const { startTracing } = require('./tracing');

const provider = startTracing('corpus-node_agent_retried_429');
registerInstrumentations({ instrumentations: [new HttpInstrumentation()] });
const http = require('http');
const tracer = api.trace.getTracer('corpus.node.agent');

function post(path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(process.env.LLM_URL + path, { method: 'POST',
      headers: { 'content-type': 'application/json' } }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function chat() {
  return tracer.startActiveSpan('chat gpt-4o-mini', { kind: api.SpanKind.CLIENT, attributes: {
    'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.provider.name': 'openai' } }, async (span) => {
    const res = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [] });
    if (res.status >= 400) {
      span.setAttribute('error.type', String(res.status));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: `HTTP ${res.status}` });
    } else {
      const usage = JSON.parse(res.body).usage;
      span.setAttribute('gen_ai.usage.input_tokens', usage.prompt_tokens);
      span.setAttribute('gen_ai.usage.output_tokens', usage.completion_tokens);
    }
    span.end();
    return res.status;
  });
}

async function main() {
  let traceId = null;
  await tracer.startActiveSpan('POST /v1/ask', { kind: api.SpanKind.SERVER, attributes: {
    'http.request.method': 'POST', 'http.route': '/v1/ask' } }, async (root) => {
    traceId = root.spanContext().traceId;
    await tracer.startActiveSpan('invoke_agent support-agent', { attributes: {
      'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-agent' } },
    async (agent) => {
      let status = await chat();
      if (status === 429) status = await chat();
      agent.end();
    });
    root.setAttribute('http.response.status_code', 200);
    root.end();
  });
  await provider.shutdown();
  console.log(JSON.stringify({ trace_id: traceId }));
}

main().catch((err) => { console.error(err); process.exit(1); });
