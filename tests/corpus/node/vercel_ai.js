// A Node agent on the Vercel AI SDK: generateText with one tool, its own telemetry
// (experimental_telemetry) recording the ai.* spans, under a SERVER span as a web framework's
// instrumentation writes it. The model is OpenAI's chat API (LLM_URL: the fake server).
// Argument: `ok` (the model asks for search_kb, then answers) or `rate_limited` (the model
// answers 429 to the call and to the SDK's two retries).
// Env: LLM_URL, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (where spans go).
const api = require('@opentelemetry/api');
const { startTracing } = require('./tracing');

const story = process.argv[2];
const provider = startTracing(`corpus-vercel_ai_${story}`);
const { generateText, tool, stepCountIs } = require('ai');
const { createOpenAI } = require('@ai-sdk/openai');
const { z } = require('zod');

const openai = createOpenAI({ baseURL: `${process.env.LLM_URL}/v1`, apiKey: 'sk-local-fake' });
const tracer = api.trace.getTracer('corpus.node.app');

const searchKb = tool({
  description: 'Search the knowledge base.',
  inputSchema: z.object({ query: z.string() }),
  execute: async ({ query }) => `Refunds take 5 days (${query}).`,
});

async function main() {
  let traceId = null;
  await tracer.startActiveSpan('POST /v1/ask', { kind: api.SpanKind.SERVER, attributes: {
    'http.request.method': 'POST', 'http.route': '/v1/ask' } }, async (root) => {
    traceId = root.spanContext().traceId;
    try {
      await generateText({
        model: openai.chat('gpt-4o-mini'), tools: { search_kb: searchKb },
        stopWhen: stepCountIs(3), maxRetries: 2, prompt: 'How long do refunds take?',
        experimental_telemetry: { isEnabled: true, functionId: 'support-agent' },
      });
      root.setAttribute('http.response.status_code', 200);
    } catch (err) {
      root.setAttribute('http.response.status_code', 500);
      root.setAttribute('error.type', '500');
      root.setStatus({ code: api.SpanStatusCode.ERROR, message: err.name });
    }
    root.end();
  });
  await provider.shutdown();
  console.log(JSON.stringify({ trace_id: traceId }));
}

main().catch((err) => { console.error(err); process.exit(1); });
