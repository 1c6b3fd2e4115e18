"""The answer cache of /v1/retrieve: shared answers, one computation per question, bounded work."""

from __future__ import annotations

import asyncio

import pytest

from api.services import answers as answers_module
from api.services.answers import Answers


class Counting:
    def __init__(self, delay_s: float = 0.0, fail: bool = False) -> None:
        self.calls = 0
        self.delay_s = delay_s
        self.fail = fail

    async def __call__(self) -> str:
        self.calls += 1
        await asyncio.sleep(self.delay_s)
        if self.fail:
            raise RuntimeError("index down")
        return f"answer {self.calls}"


async def ask(cache: Answers[str], key: str, compute: Counting) -> str | None:
    found = cache.get(key)
    if found is not None:
        return found
    task = cache.start(key, compute)
    return None if task is None else await task


async def test_identical_requests_within_the_ttl_share_one_answer() -> None:
    cache: Answers[str] = Answers(ttl_s=60)
    compute = Counting()
    assert await ask(cache, "q", compute) == "answer 1"
    assert await ask(cache, "q", compute) == "answer 1"
    assert compute.calls == 1


async def test_concurrent_identical_requests_wait_for_one_computation() -> None:
    cache: Answers[str] = Answers(ttl_s=60)
    compute = Counting(delay_s=0.05)
    got = await asyncio.gather(*(ask(cache, "q", compute) for _ in range(20)))
    assert set(got) == {"answer 1"}
    assert compute.calls == 1


async def test_an_answer_older_than_the_ttl_is_computed_again() -> None:
    cache: Answers[str] = Answers(ttl_s=0.05)
    compute = Counting()
    await ask(cache, "q", compute)
    await asyncio.sleep(0.08)
    assert await ask(cache, "q", compute) == "answer 2"


async def test_an_answer_past_half_its_life_is_stale_and_refreshed_ahead() -> None:
    cache: Answers[str] = Answers(ttl_s=0.2)
    compute = Counting()
    await ask(cache, "q", compute)
    assert not cache.stale("q")
    await asyncio.sleep(0.12)
    assert cache.stale("q")
    assert cache.get("q") == "answer 1"  # still served while it refreshes
    task = cache.start("q", compute)
    assert task is not None
    await task
    assert cache.get("q") == "answer 2"


async def test_a_zero_ttl_keeps_no_answer() -> None:
    cache: Answers[str] = Answers(ttl_s=0)
    compute = Counting()
    await ask(cache, "q", compute)
    await ask(cache, "q", compute)
    assert compute.calls == 2


async def test_a_failed_computation_is_not_kept() -> None:
    cache: Answers[str] = Answers(ttl_s=60)
    with pytest.raises(RuntimeError):
        await ask(cache, "q", Counting(fail=True))
    assert cache.get("q") is None


async def test_a_computation_that_outlives_its_caller_is_kept_for_the_next_request() -> None:
    cache: Answers[str] = Answers(ttl_s=60)
    task = cache.start("q", Counting(delay_s=0.05))
    assert task is not None
    done, _ = await asyncio.wait({task}, timeout=0.001)  # the caller's budget runs out
    assert not done
    await asyncio.sleep(0.08)
    assert cache.get("q") == "answer 1"


async def test_requests_beyond_the_running_limit_are_shed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answers_module, "MAX_RUNNING", 3)
    cache: Answers[str] = Answers(ttl_s=60)
    tasks = [cache.start(f"q{i}", Counting(delay_s=0.05)) for i in range(3)]
    assert all(t is not None for t in tasks)
    assert cache.start("q3", Counting()) is None
    assert cache.shed == 1
    await asyncio.gather(*(t for t in tasks if t is not None))
    assert cache.start("q3", Counting()) is not None
