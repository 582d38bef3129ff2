-- wrk script: a fixed moderate request rate through random think time.
--
-- Every connection waits a uniform random 0..MAX_PAUSE ms before each request, so with 32 connections
-- and a 0-64 ms pause (mean 32 ms) the offered load is about 32 / 0.032 s = 1,000 requests/s, spread
-- out in time instead of in synchronised bursts. wrk measures each request's latency from the moment it
-- is written (after the pause) to the end of the response, in microseconds.
--
-- Usage:
--   wrk -t1 -c32 -d10s --latency -s benchmarks/fixed-rate.lua http://127.0.0.1:PORT/v1/chat/completions \
--       -- <direct|gateway|config> [custom_host] [gateway_api_key] [max_pause_ms] ["Name: value" ...]
--
-- gateway mode adds x-gateway-api-key, x-gateway-provider: openai and x-gateway-custom-host.
-- config mode adds only x-gateway-api-key: the route comes from an x-gateway-config header given as an
-- extra header (custom_host is ignored; pass '').
-- Every argument after max_pause_ms is one extra header "Name: value" (e.g. "x-gateway-config: {...}").
-- The env variable WRK_EXTRA_HEADER ("Name: value") adds one more.
-- done() prints one line `WRK_JSON {...}` with latency percentiles in microseconds.

local body = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}'
local max_pause = 64
local req = nil
local thread_counter = 0

function setup(thread)
  thread_counter = thread_counter + 1
  thread:set("tid", thread_counter)
end

function init(args)
  local mode = args[1] or "direct"
  local headers = {
    ["content-type"] = "application/json",
    ["authorization"] = "Bearer sk-bench",
  }
  if mode == "gateway" then
    headers["x-gateway-api-key"] = args[3] or "bench-key"
    headers["x-gateway-provider"] = "openai"
    headers["x-gateway-custom-host"] = args[2]
  end
  if mode == "config" then
    headers["x-gateway-api-key"] = args[3] or "bench-key"
  end
  if args[4] and args[4] ~= "" then max_pause = tonumber(args[4]) end
  local extra = {}
  for i = 5, #args do extra[#extra + 1] = args[i] end
  local env_header = os.getenv("WRK_EXTRA_HEADER")
  if env_header and env_header ~= "" then extra[#extra + 1] = env_header end
  for _, h in ipairs(extra) do
    local name, value = string.match(h, "^%s*([^:]+):%s*(.*)$")
    if name then headers[name] = value end
  end
  math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
  req = wrk.format("POST", wrk.path, headers, body)
end

function request()
  return req
end

function delay()
  return math.random(0, max_pause)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.2f,"stdev":%.2f,"max":%d,"p50":%d,"p75":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(75), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9)))
end
