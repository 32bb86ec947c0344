// Drives `spillway serve` (or `spillway gateway` in front of it) with the official OpenAI Node
// SDK: the model list, a non-streaming and a streaming chat completion, and the SDK's own retry
// of a 429 after `Retry-After` seconds.
// Run by tests/server/openai_sdk_test.cc:
//   node sdk_test.mjs BASE_URL API_KEY LIMITED_API_KEY [REJECTED_COUNTER]
// BASE_URL ends in /v1; API_KEY has no rate limit; LIMITED_API_KEY's tenant has a token bucket
// of 1 request/s with burst 1 that nothing else uses. Exits 1 with a message on the first failure.
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { VERSION } from 'openai/version';

// The counter of 429 replies on the target's /metrics: serve's, or the gateway's when the
// target is `spillway gateway` (4th argument).
const [baseURL, apiKey, limitedKey, rejectedCounter = 'spillway_http_requests_total'] =
  process.argv.slice(2);
if (!baseURL || !apiKey || !limitedKey) {
  console.error('usage: node sdk_test.mjs BASE_URL API_KEY LIMITED_API_KEY');
  process.exit(2);
}

// Everything is bounded: each SDK request by `timeout`, the whole script by this watchdog.
setTimeout(() => fail(new Error('did not finish within 90 s')), 90_000).unref();
let step = 'start';
function fail(err) {
  let detail = '';
  if (err instanceof OpenAI.APIError && err.status) detail = ` (HTTP ${err.status}, headers ${JSON.stringify(err.headers)})`;
  else if (err.cause) detail = ` (${err.cause.message ?? err.cause})`;
  console.error(`FAIL in ${step}: ${err.message}${detail}`);
  process.exit(1);
}

const client = new OpenAI({ baseURL, apiKey, timeout: 20_000, maxRetries: 0 });
const messages = [{ role: 'user', content: 'Say hello to the OpenAI Node SDK.' }];
const summary = [];

// The sum of the samples of counter `name` from GET /metrics whose labels include `label`.
async function counter(name, label) {
  const response = await fetch(new URL('/metrics', baseURL), { signal: AbortSignal.timeout(10_000) });
  assert.equal(response.status, 200, 'GET /metrics');
  let sum = 0;
  for (const line of (await response.text()).split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(label)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// GET /v1/models: the served model's id is what the completions ask for.
async function listModels() {
  const models = [];
  for await (const m of client.models.list()) models.push(m);
  assert.ok(models.length > 0 && typeof models[0].id === 'string', 'models.list() names a model');
  summary.push(`models: ${models.map((m) => m.id).join(', ')}`);
  return models[0].id;
}

async function nonStreaming(model) {
  const c = await client.chat.completions.create({ model, messages, max_tokens: 8 });
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.choices.length, 1, 'one choice');
  assert.equal(c.choices[0].message.role, 'assistant');
  assert.equal(typeof c.choices[0].message.content, 'string', 'message.content is a string');
  assert.ok(['stop', 'length'].includes(c.choices[0].finish_reason), `finish_reason ${c.choices[0].finish_reason}`);
  assert.ok(c.usage.prompt_tokens > 0, 'usage.prompt_tokens > 0');
  assert.ok(c.usage.completion_tokens > 0, 'usage.completion_tokens > 0');
  assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens, 'usage.total_tokens');
  summary.push(`chat: ${c.usage.prompt_tokens}+${c.usage.completion_tokens} tokens, ` +
               `finish_reason ${c.choices[0].finish_reason}, "${c.choices[0].message.content}"`);
}

// Streaming with a final usage chunk (stream_options.include_usage): content deltas, then a
// chunk with empty choices and the usage; the SDK ends the iteration at `data: [DONE]`.
async function streaming(model) {
  const stream = await client.chat.completions.create({
    model, messages, max_tokens: 8, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let chunks = 0;
  let finishReason = null;
  let usage = null;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(usage, null, 'the usage chunk is the last one');
    if (chunk.usage) {
      assert.deepEqual(chunk.choices, [], 'the usage chunk has no choices');
      usage = chunk.usage;
      continue;
    }
    text += chunk.choices[0].delta.content ?? '';
    finishReason = chunk.choices[0].finish_reason ?? finishReason;
  }
  assert.ok(text.length > 0, 'content deltas arrived');
  assert.ok(['stop', 'length'].includes(finishReason), `stream finish_reason ${finishReason}`);
  assert.ok(usage, 'a usage chunk arrived');
  assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0, 'stream usage counts > 0');
  summary.push(`stream: ${chunks} chunks, ${usage.completion_tokens} tokens, "${text}"`);
}

// Retry on 429: the limited key's bucket holds 1 token; the first request takes it, so the next
// gets 429 with Retry-After, and the SDK (maxRetries 2) must sleep that long and retry. A
// recording fetch (the SDK's public `fetch` option, over Node's global fetch) sees each attempt.
async function retryOn429(model) {
  const attempts = [];  // one per HTTP attempt: {status, retryAfter, sent, received} (ms)
  const recordingFetch = async (url, init) => {
    const sent = performance.now();
    const response = await fetch(url, init);
    attempts.push({ status: response.status, retryAfter: response.headers.get('retry-after'), sent, received: performance.now() });
    return response;
  };
  const limited = new OpenAI({ baseURL, apiKey: limitedKey, timeout: 20_000, maxRetries: 2, fetch: recordingFetch });
  const request = { model, messages, max_tokens: 4 };
  const rejectedBefore = await counter(rejectedCounter, 'status="429"');

  await limited.chat.completions.create(request, { maxRetries: 0 });  // takes the only token
  const start = performance.now();
  const c = await limited.chat.completions.create(request);
  const elapsedMs = performance.now() - start;

  const statuses = attempts.map((a) => a.status);
  assert.deepEqual(statuses, [200, 429, 200], `attempt statuses ${statuses} (want 200, 429, 200)`);
  assert.equal(typeof c.choices[0].message.content, 'string', 'the retried completion has content');
  const retryAfterS = Number(attempts[1].retryAfter);
  assert.ok(Number.isInteger(retryAfterS) && retryAfterS >= 1, `Retry-After "${attempts[1].retryAfter}"`);
  // The SDK sleeps Retry-After (when under 60 s) instead of its own ~0.5 s backoff: the retry is
  // sent no sooner (minus timer slack) and, even on a loaded machine, not much later.
  const sleptMs = attempts[2].sent - attempts[1].received;
  assert.ok(sleptMs >= retryAfterS * 1000 - 50, `the SDK retried ${sleptMs.toFixed(0)} ms after the 429, before Retry-After ${retryAfterS} s`);
  assert.ok(sleptMs <= retryAfterS * 1000 + 3000, `the SDK retried ${sleptMs.toFixed(0)} ms after the 429, long after Retry-After ${retryAfterS} s`);
  assert.ok(elapsedMs <= retryAfterS * 1000 + 10_000, `the retried call took ${elapsedMs.toFixed(0)} ms`);

  const rejected = (await counter(rejectedCounter, 'status="429"')) - rejectedBefore;
  assert.equal(rejected, 1, `/metrics counted ${rejected} new 429 responses (want 1)`);
  summary.push(`retry: 429 with Retry-After ${retryAfterS} s, SDK slept ${sleptMs.toFixed(0)} ms, ` +
               `call served in ${elapsedMs.toFixed(0)} ms; /metrics counted 1 new 429`);
}

try {
  step = 'models.list';
  const model = await listModels();
  step = 'non-streaming chat completion';
  await nonStreaming(model);
  step = 'streaming chat completion';
  await streaming(model);
  step = 'retry on 429';
  await retryOn429(model);
} catch (err) {
  fail(err);
}
console.log(`OpenAI Node SDK ${VERSION} on node ${process.version} against ${baseURL}: OK\n  ${summary.join('\n  ')}`);
