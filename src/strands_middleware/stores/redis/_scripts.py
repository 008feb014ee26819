"""The Lua scripts `RedisStore` runs: one script per atomic decision, on the server's clock.

A script runs on the server with nothing else in between, so a decision (is there a token, a
free slot, room under a limit, a snapshot left to take?) and its write are one step that no
other process can split. Times come from the server (``TIME``), never from the workers, so
workers whose clocks disagree still share one clock. Times are microseconds, which a Lua number
(a double) holds exactly; numbers go back to Python as strings, because Redis truncates a Lua
number in a reply to an integer.

Every script touches only the keys it is given, and every key of one script shares a hash tag,
so each runs on one Redis Cluster node.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = [
    "BREAKER_ADMIT",
    "BREAKER_RECORD",
    "COUNTER_ADD",
    "RATE_REFUND",
    "RATE_RESERVE",
    "SLOT_ACQUIRE",
    "SLOT_RELEASE",
    "SLOT_RENEW",
    "SNAPSHOT_PUT",
    "SNAPSHOT_TAKE",
    "Script",
]


@dataclass(frozen=True)
class Script:
    """A Lua script and its SHA-1, which ``EVALSHA`` runs without resending the text."""

    name: str
    text: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.text.encode()).hexdigest())


_NOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
"""

# GCRA, the generic cell rate algorithm: the bucket is one number, the theoretical arrival time
# (TAT) of the next call at the steady rate. A call may start once ``TAT - burst * interval`` has
# passed; taking a token moves the TAT on by one interval. A caller that would have to wait
# reserves its token all the same and is told how long to sleep, so waiters are served in the
# order they asked. The key expires once the bucket is full again.
# KEYS[1] the bucket; ARGV[1] the interval (microseconds per token); ARGV[2] the burst.
RATE_RESERVE = Script(
    "rate_reserve",
    _NOW
    + """
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local next_tat = tat + interval
local wait = next_tat - burst * interval - now
if wait < 0 then wait = 0 end
redis.call('SET', KEYS[1], string.format('%.3f', next_tat),
           'PX', math.ceil((next_tat - now) / 1000) + 1)
return string.format('%.3f', wait)
""",
)

# Giving a token back moves the TAT back by one interval, never below now (a full bucket).
# KEYS[1] the bucket; ARGV[1] the interval in microseconds.
RATE_REFUND = Script(
    "rate_refund",
    _NOW
    + """
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = tat - tonumber(ARGV[1])
if back <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.3f', back), 'PX', math.ceil((back - now) / 1000) + 1)
end
return 1
""",
)

# A counting semaphore with leases and a first-come, first-served queue.
# KEYS[1] holders (sorted set: token -> lease end), KEYS[2] queue (token -> time it queued),
# KEYS[3] seen (token -> last time a waiter asked).
# ARGV[1] token, ARGV[2] limit, ARGV[3] lease (microseconds), ARGV[4] how long a waiter that
# stopped asking keeps its place (microseconds).
# Expired holders are dropped first: that is how a dead holder's slot comes free. Waiters that
# stopped asking (their process died) leave the queue, so they cannot block the ones behind.
# A waiter gets a slot when its place in the queue is within the free slots; asking again is how
# it keeps its place. Returns 1 with the slot held, 0 to ask again later.
SLOT_ACQUIRE = Script(
    "slot_acquire",
    _NOW
    + """
local token = ARGV[1]
local limit = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local patience = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - patience)
for _, waiter in ipairs(gone) do
  redis.call('ZREM', KEYS[2], waiter)
  redis.call('ZREM', KEYS[3], waiter)
end
local keep = math.ceil((lease + patience) / 1000) + 1000
local acquired = 0
if redis.call('ZSCORE', KEYS[1], token) then
  acquired = 1
else
  if not redis.call('ZSCORE', KEYS[2], token) then
    redis.call('ZADD', KEYS[2], now, token)
  end
  local free = limit - redis.call('ZCARD', KEYS[1])
  if free > 0 and redis.call('ZRANK', KEYS[2], token) < free then
    redis.call('ZREM', KEYS[2], token)
    redis.call('ZREM', KEYS[3], token)
    acquired = 1
  else
    redis.call('ZADD', KEYS[3], now, token)
  end
end
if acquired == 1 then
  redis.call('ZADD', KEYS[1], now + lease, token)
end
for i = 1, 3 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], keep) end
end
return acquired
""",
)

# Extends a holder's lease, only if its lease has not already run out.
# KEYS[1] holders; ARGV[1] token, ARGV[2] lease (microseconds). Returns 1, or 0 if it was lost.
SLOT_RENEW = Script(
    "slot_renew",
    _NOW
    + """
local ends = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
if ends <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
local wanted = math.ceil(lease / 1000) + 1000
if ttl < wanted then redis.call('PEXPIRE', KEYS[1], wanted) end
return 1
""",
)

# Frees a slot (or a place in the queue) by token: only the caller's own.
# KEYS[1] holders, KEYS[2] queue, KEYS[3] seen; ARGV[1] token.
SLOT_RELEASE = Script(
    "slot_release",
    """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
""",
)

# Adds to the fields of a hash unless one would pass its limit: check and add in one step.
# KEYS[1] the hash; ARGV[1] n, then n triples (field, amount, limit or '' for none).
# Returns {1, value...} with each field's value after, or {0, value...} with nothing added.
COUNTER_ADD = Script(
    "counter_add",
    """
local n = tonumber(ARGV[1])
local values = {}
local fits = 1
for i = 0, n - 1 do
  local field = ARGV[2 + 3 * i]
  local amount = tonumber(ARGV[3 + 3 * i])
  local limit = ARGV[4 + 3 * i]
  local value = tonumber(redis.call('HGET', KEYS[1], field) or '0')
  if limit ~= '' and value + amount > tonumber(limit) then fits = 0 end
  values[i + 1] = value
end
if fits == 1 then
  for i = 0, n - 1 do
    local amount = tonumber(ARGV[3 + 3 * i])
    if amount ~= 0 then
      values[i + 1] = redis.call('HINCRBY', KEYS[1], ARGV[2 + 3 * i], amount)
    end
  end
end
local reply = {fits}
for i = 1, n do reply[i + 1] = tostring(values[i]) end
return reply
""",
)

# Stores a snapshot under the next version. The version lives in the same hash as the value and
# outlives a take, so versions count on and an old version never matches a newer snapshot.
# KEYS[1] the hash; ARGV[1] the value, ARGV[2] ttl in milliseconds. Returns the version.
SNAPSHOT_PUT = Script(
    "snapshot_put",
    """
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'value', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return version
""",
)

# Takes a snapshot and deletes its value in one step: of many callers, exactly one gets it.
# KEYS[1] the hash; ARGV[1] the version wanted, or '' for any. Returns {version, value} or nil.
SNAPSHOT_TAKE = Script(
    "snapshot_take",
    """
local value = redis.call('HGET', KEYS[1], 'value')
if not value then return false end
local version = redis.call('HGET', KEYS[1], 'version')
if ARGV[1] ~= '' and ARGV[1] ~= version then return false end
redis.call('HDEL', KEYS[1], 'value')
return {version, value}
""",
)


# A circuit breaker is one hash: ``until`` (0 or absent: closed; else when the open period ends),
# ``probe`` (the end of the lease of the half-open circuit's one probe call) and ``failures``
# (failures in a row). The rules are `strands_middleware.stores._breaker.Circuit`'s.
# KEYS[1] the hash; ARGV[1] the cooldown (microseconds); ARGV[2] the idle expiry (milliseconds).
# Returns the microseconds to wait, as a string: '0' lets the call through.
BREAKER_ADMIT = Script(
    "breaker_admit",
    _NOW
    + """
local reopens = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if reopens == 0 then return '0' end
if now < reopens then return tostring(reopens - now) end
local probe = tonumber(redis.call('HGET', KEYS[1], 'probe') or '0')
if now < probe then return tostring(probe - now) end
redis.call('HSET', KEYS[1], 'probe', now + tonumber(ARGV[1]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return '0'
""",
)

# Counts a call's outcome: a success deletes the hash (closed, no failures); a failure counts one
# more, and opens the circuit for a cooldown at the threshold or when it is open or half-open.
# KEYS[1] the hash; ARGV[1] '1' for a failure, '0' for a success; ARGV[2] the threshold;
# ARGV[3] the cooldown (microseconds); ARGV[4] the idle expiry (milliseconds).
BREAKER_RECORD = Script(
    "breaker_record",
    _NOW
    + """
if ARGV[1] == '0' then
  redis.call('DEL', KEYS[1])
  return 1
end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local reopens = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if reopens ~= 0 or failures >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'until', now + tonumber(ARGV[3]), 'probe', 0)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
""",
)
