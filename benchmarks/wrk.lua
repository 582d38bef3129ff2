-- wrk script: the same POST on every connection, as fast as answers come back.
--
--   WRK_BODY='{"model":...}' wrk -t1 -c64 -d10s -s benchmarks/wrk.lua http://127.0.0.1:PORT/v1/chat/completions \
--       -- "content-type: application/json" "x-gateway-api-key: ..."
--
-- Every argument after `--` is one header "Name: value"; the body is the WRK_BODY variable.
-- done() prints one line `WRK_JSON {...}`: requests, duration, errors (socket errors, timeouts and
-- answers other than 2xx/3xx) and the p50/p99 latency in microseconds.

local req = nil

function init(args)
  local headers = {}
  for _, h in ipairs(args) do
    local name, value = string.match(h, "^%s*([^:]+):%s*(.*)$")
    if name then headers[name] = value end
  end
  req = wrk.format("POST", nil, headers, os.getenv("WRK_BODY") or "")
end

function request()
  return req
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
