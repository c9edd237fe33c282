-- The benchmark's closed-loop load for wrk (one thread), driven by environment variables that
-- bench/wrk.ts sets:
--   WRK_REQUESTS    file of the requests sent in turn, one a line: METHOD <tab> PATH [<tab> BODY];
--                   a BODY's {{uuid}} becomes a new version-4 UUID in every request (a new RefId)
--   WRK_AUTH        the Authorization header of every request (Basic credentials)
--   WRK_STOP_AFTER  stop after this many answers (SIGINT to wrk itself, so done() still reports)
--   WRK_RESULT      file the JSON summary is written to, with wrk's own CPU time
-- Requests without a UUID are formatted once here; a request with one is formatted when sent.

local PLACEHOLDER = "{{uuid}}"
local requests = {}
local count = 0
local next_index = 0

local headers = { ["Authorization"] = os.getenv("WRK_AUTH") }
local json_headers = { ["Authorization"] = os.getenv("WRK_AUTH"), ["Content-Type"] = "application/json" }

-- UUIDs: 12 random hex digits for this process, then a counter, so no two requests share one
local random_file = io.open("/dev/urandom", "rb")
local seed = random_file:read(6)
random_file:close()
local prefix = ""
for i = 1, #seed do prefix = prefix .. string.format("%02x", seed:byte(i)) end
local uuid_count = 0
local function uuid ()
  uuid_count = uuid_count + 1
  local tail = string.format("%016x", uuid_count)
  return prefix:sub(1, 8) .. "-" .. prefix:sub(9, 12) .. "-4" .. tail:sub(2, 4) .. "-8" .. tail:sub(6, 8) .. "-" .. tail:sub(9, 16) .. "0000"
end

-- in init, once wrk has set the Host header of the URL
function init ()
  for line in io.lines(os.getenv("WRK_REQUESTS")) do
    local method, path, body = line:match("^(%u+)\t([^\t]+)\t?(.*)$")
    if method ~= nil then
      count = count + 1
      local at = body:find(PLACEHOLDER, 1, true)
      if body == "" then
        requests[count] = wrk.format(method, path, headers)
      elseif at == nil then
        requests[count] = wrk.format(method, path, json_headers, body)
      else
        local before, after = body:sub(1, at - 1), body:sub(at + #PLACEHOLDER)
        requests[count] = function () return wrk.format(method, path, json_headers, before .. uuid() .. after) end
      end
    end
  end
  if count == 0 then error("no requests in " .. tostring(os.getenv("WRK_REQUESTS"))) end
end

function request ()
  next_index = next_index % count + 1
  local r = requests[next_index]
  if type(r) == "function" then return r() end
  return r
end

local stop_after = tonumber(os.getenv("WRK_STOP_AFTER") or "0") or 0
if stop_after > 0 then
  local answered = 0
  -- defined only when needed: wrk reads no answer into Lua otherwise
  function response ()
    answered = answered + 1
    if answered == stop_after then
      wrk.thread:stop()
      local ffi = require("ffi")
      ffi.cdef("int kill(int pid, int sig); int getpid(void);")
      ffi.C.kill(ffi.C.getpid(), 2)
    end
  end
end

-- user + system CPU time of this process so far, in clock ticks
local function cpu_ticks ()
  local f = io.open("/proc/self/stat", "r")
  local stat = f:read("*a")
  f:close()
  local fields = {}
  for w in stat:sub(stat:find(")", 1, true) + 2):gmatch("%S+") do fields[#fields + 1] = w end
  return tonumber(fields[12]) + tonumber(fields[13])
end

function done (summary, latency)
  local e = summary.errors
  local out = io.open(os.getenv("WRK_RESULT"), "w")
  out:write(string.format(
    '{"requests":%d,"durationUs":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},"cpuTicks":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean, cpu_ticks()))
  out:close()
end
