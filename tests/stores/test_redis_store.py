"""RedisStore on a real server: keys and hash tags, leases, clocks, clients per loop, failures."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest
import redis
from redis.crc import key_slot

from strands_middleware.exceptions import StoreError
from strands_middleware.stores.redis import RedisStore
from strands_middleware.stores.redis._store import _within  # pyright: ignore[reportPrivateUsage]

from .redis_server import RedisServer

# ---- keys ----------------------------------------------------------------------------------


def test_keys_carry_the_prefix_the_concern_and_the_name_as_a_hash_tag() -> None:
    store = RedisStore.from_url("redis://localhost:6379/0", prefix="app")
    assert store.key("rate", "bedrock") == "app:rate:{bedrock}"
    assert store.key("slots", "bedrock", "queue") == "app:slots:{bedrock}:queue"


async def test_every_key_of_one_limiter_shares_a_cluster_slot(
    redis_store: RedisStore, redis_server: RedisServer
) -> None:
    await redis_store.slot_acquire("bedrock", limit=1, lease=30)
    waiter = asyncio.create_task(redis_store.slot_acquire("bedrock", limit=1, lease=30))
    with redis_server.client() as client:
        for _ in range(2000):
            if client.exists(redis_store.key("slots", "bedrock", "queue")):
                break
            await asyncio.sleep(0.005)
        keys = sorted(key.decode() for key in client.keys(f"{redis_store.prefix}:*"))
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert keys == [
        f"{redis_store.prefix}:slots:{{bedrock}}:holders",
        f"{redis_store.prefix}:slots:{{bedrock}}:queue",
        f"{redis_store.prefix}:slots:{{bedrock}}:seen",
    ]
    assert len({key_slot(key.encode()) for key in keys}) == 1  # Redis Cluster's CRC16 slot


async def test_every_key_a_store_writes_expires(
    redis_store: RedisStore, redis_server: RedisServer
) -> None:
    await redis_store.rate_reserve("r", rate=1, burst=1)
    token = await redis_store.slot_acquire("s", limit=1, lease=5)
    await redis_store.cache_set("c", b"x", 60)
    await redis_store.snapshot_put("p", b"x", 60)
    with redis_server.client() as client:
        keys = client.keys(f"{redis_store.prefix}:*")
        assert keys
        assert all(int(client.pttl(key)) > 0 for key in keys)
    await redis_store.slot_release("s", token)


def test_a_prefix_with_braces_is_refused() -> None:
    with pytest.raises(ValueError, match=r"RedisStore\(prefix=\.\.\.\) must be a non-empty str"):
        RedisStore.from_url("redis://localhost", prefix="a{b}")


@pytest.mark.parametrize("keyword", ["timeout", "poll"])
def test_a_timeout_or_poll_that_is_not_a_positive_number_is_refused(keyword: str) -> None:
    with pytest.raises(ValueError, match=rf"RedisStore\({keyword}=\.\.\.\) must be a number"):
        RedisStore.from_url("redis://localhost", **{keyword: 0})


def test_the_store_names_its_server_without_the_password() -> None:
    store = RedisStore.from_url("redis://user:secret@cache.internal:6380/2", prefix="app")
    assert repr(store) == "RedisStore(redis://user:***@cache.internal:6380/2, prefix='app')"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "redis://cache.internal:6380/2?password=hunter2",
            "redis://cache.internal:6380/2?password=***",
        ),
        (
            "unix:///run/redis.sock?db=3&password=hunter2",
            "unix:///run/redis.sock?db=3&password=***",
        ),
        ("redis://:hunter2@h/0?PASSWORD=hunter2", "redis://:***@h/0?PASSWORD=***"),
    ],
)
def test_a_password_given_as_a_query_argument_is_masked_too(url: str, shown: str) -> None:
    assert repr(RedisStore.from_url(url, prefix="app")) == f"RedisStore({shown}, prefix='app')"


async def test_a_store_error_never_carries_the_password(
    private_redis: RedisServer, prefix: str
) -> None:
    store = RedisStore.from_url(f"{private_redis.url}?password=hunter2", prefix=prefix)
    private_redis.stop()
    with pytest.raises(StoreError) as error:
        await store.counter_add("c", {"n": 1})
    assert "?password=***" in str(error.value)
    assert "hunter2" not in str(error.value)
    await store.aclose()


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("localhost:6379", "must specify one of the following schemes"),
        ("http://cache.internal:6379/0", "must specify one of the following schemes"),
        ("redis://:notaport/0", "Port could not be cast to integer value as 'notaport'"),
        ("redis://cache.internal:99999/0", "Port out of range"),
        ("redis://cache.internal:6379/zero", "the database 'zero' is not a number"),
        ("redis://:hunter2@cache.internal:port/0", "Port could not be cast"),
    ],
)
def test_a_malformed_url_is_refused_when_the_store_is_built(url: str, problem: str) -> None:
    # No server is needed (nor reached): the URL is read, not connected to.
    with pytest.raises(ValueError) as error:
        RedisStore.from_url(url)
    message = str(error.value)
    assert message.startswith("RedisStore.from_url(")
    assert problem in message
    assert "Write redis://[[user]:password@]host[:port][/db]" in message
    assert "hunter2" not in message


# ---- leases and the server's clock ---------------------------------------------------------


async def test_a_holder_that_stops_renewing_loses_its_slot_after_one_lease(
    redis_store: RedisStore,
) -> None:
    dead = await redis_store.slot_acquire("s", limit=1, lease=0.3)
    started = time.monotonic()
    await asyncio.wait_for(redis_store.slot_acquire("s", limit=1, lease=30), 10)
    assert time.monotonic() - started >= 0.25  # it did wait for the lease to run out
    assert not await redis_store.slot_renew("s", dead, lease=0.3)


async def test_a_renewed_lease_keeps_its_slot(redis_store: RedisStore) -> None:
    token = await redis_store.slot_acquire("s", limit=1, lease=0.3)
    for _ in range(4):
        await asyncio.sleep(0.1)
        assert await redis_store.slot_renew("s", token, lease=0.3)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(redis_store.slot_acquire("s", limit=1, lease=30), 0.2)


async def test_a_bucket_keeps_time_by_the_servers_clock(
    redis_store: RedisStore, redis_server: RedisServer
) -> None:
    await redis_store.rate_reserve("r", rate=0.01, burst=1)
    with redis_server.client() as client:
        seconds, micros = client.time()
        tat = float(client.get(redis_store.key("rate", "r")) or 0)
    # The bucket's next free moment is one interval (100 s) after the server's now.
    assert 99 < (tat - (seconds * 1_000_000 + micros)) / 1_000_000 <= 100


# ---- one client per event loop -------------------------------------------------------------


def test_one_store_serves_many_event_loops_and_closes_each_loops_client(
    redis_server: RedisServer, prefix: str
) -> None:
    store = RedisStore.from_url(redis_server.url, prefix=prefix)

    async def use() -> int:
        await store.cache_set("k", b"v", None)
        return len(store._clients)  # pyright: ignore[reportPrivateUsage]

    # Each synchronous agent(...) call runs a loop of its own, as asyncio.run does here.
    assert [asyncio.run(use()) for _ in range(3)] == [1, 1, 1]
    with redis_server.client() as client:
        names = [entry for entry in client.client_list() if entry.get("cmd") == "set"]
        assert names == []  # every loop's connection was closed when its loop shut down


async def test_tasks_of_one_loop_share_its_client(redis_store: RedisStore) -> None:
    await asyncio.gather(*(redis_store.cache_get(f"k{n}") for n in range(10)))
    assert len(redis_store._clients) == 1  # pyright: ignore[reportPrivateUsage]


# ---- failures ------------------------------------------------------------------------------


async def test_a_cancel_that_arrives_with_the_reply_is_not_lost() -> None:
    # The reply lands and the caller cancels in the same loop turn: the caller's cancellation
    # wins, so a cancelled waiter never goes on polling for a slot.
    reply: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    call = asyncio.create_task(_within(5.0, reply))
    await asyncio.sleep(0)
    reply.set_result(1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


@pytest.mark.skipif(
    sys.version_info < (3, 11), reason="Task.cancelling(), which shows the lost cancel, is 3.11+"
)
async def test_a_cancel_swallowed_below_the_store_is_raised_again() -> None:
    # What asyncio.wait_for does before Python 3.12 when the reply lands with the cancel.
    async def swallowing() -> int:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return 1
        return 0

    call = asyncio.create_task(_within(5.0, swallowing()))
    await asyncio.sleep(0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_a_waiter_cancelled_at_any_moment_leaves_the_queue(
    redis_store: RedisStore, redis_server: RedisServer
) -> None:
    # Cancels land at every point of the waiter's polling: inside a command's write, its read,
    # or the pause between two attempts. Each must end the waiter, never hand it the slot.
    token = await redis_store.slot_acquire("s", limit=1, lease=30)
    for round_ in range(200):
        waiter = asyncio.create_task(redis_store.slot_acquire("s", limit=1, lease=30))
        await asyncio.sleep((round_ % 40) * 0.0005)
        waiter.cancel()
        done, _ = await asyncio.wait({waiter}, timeout=5)
        assert waiter in done and waiter.cancelled(), f"round {round_}: the cancel was lost"
    with redis_server.client() as client:
        assert client.zcard(redis_store.key("slots", "s", "queue")) == 0
    await redis_store.slot_release("s", token)


async def test_an_operation_past_its_deadline_raises_timeout_error() -> None:
    never: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    with pytest.raises(asyncio.TimeoutError):
        await _within(0.01, never)
    assert never.cancelled()


async def test_a_server_that_does_not_answer_fails_within_the_timeout(
    private_redis: RedisServer, prefix: str
) -> None:
    store = RedisStore.from_url(private_redis.url, prefix=prefix, timeout=0.3)
    await store.ping()
    private_redis.pause()
    try:
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"did not answer rate_reserve within 0\.3 s") as error:
            await store.rate_reserve("r", rate=1, burst=1)
        elapsed = time.monotonic() - started
    finally:
        private_redis.resume()
    assert f"RedisStore({private_redis.url}, prefix='{prefix}')" in str(error.value)
    assert elapsed < 3  # bounded by the timeout, with room for a loaded machine
    await store.aclose()


async def test_a_server_that_is_gone_fails_with_the_store_and_the_operation_named(
    private_redis: RedisServer, prefix: str
) -> None:
    store = RedisStore.from_url(private_redis.url, prefix=prefix, timeout=0.5)
    private_redis.stop()
    with pytest.raises(StoreError, match=r"could not counter_add: ConnectionError") as error:
        await store.counter_add("c", {"n": 1})
    assert isinstance(error.value.__cause__, redis.ConnectionError)
    await store.aclose()


async def test_a_flushed_server_gets_the_scripts_sent_again(
    redis_store: RedisStore, redis_server: RedisServer
) -> None:
    await redis_store.rate_reserve("r", rate=1, burst=5)
    with redis_server.client() as client:
        client.script_flush()
    assert await redis_store.rate_reserve("r", rate=1, burst=5) == 0.0


# ---- the extra -------------------------------------------------------------------------------

_WITHOUT_REDIS = "import sys; sys.modules['redis'] = None; sys.modules['redis.asyncio'] = None; "


def test_without_redis_py_the_redis_store_names_the_extra_to_install() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", _WITHOUT_REDIS + "import strands_middleware.stores.redis"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1
    assert (
        "ImportError: strands_middleware.stores.redis needs redis-py: "
        'pip install "strands-middleware[redis]"' in completed.stderr
    )


def test_without_redis_py_everything_else_imports_and_runs_in_memory() -> None:
    program = _WITHOUT_REDIS + (
        "import strands_middleware.catalog, strands_middleware.stores; "
        "from strands_middleware.stores import InMemoryStore; "
        "from strands_middleware.catalog import RateLimit; "
        "RateLimit(rate=1, burst=1, store=InMemoryStore(), name='x'); print('ok')"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert completed.stdout == "ok\n"
