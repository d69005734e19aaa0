"""BoundedMemo: the capped output memo the mechanisms share."""

from __future__ import annotations

import pickle

from dpverify.mechanisms._memo import BoundedMemo


def test_a_value_is_computed_once_and_the_memo_stops_growing_at_its_limit():
    calls = []

    def compute(value):
        calls.append(value)
        return value * 10

    memo: BoundedMemo[int] = BoundedMemo(limit=2)
    assert [memo.get_or_compute(k, lambda k=k: compute(k)) for k in (1, 2, 1, 3, 3)] == [10, 20, 10, 30, 30]
    # 1 and 2 kept; 3 computed twice, since the memo was full (2 entries) when it came
    assert calls == [1, 2, 3, 3] and dict(memo) == {1: 10, 2: 20}


def test_a_memo_travels_to_worker_processes_with_its_limit():
    memo: BoundedMemo[str] = BoundedMemo(limit=5)
    memo.get_or_compute("k", lambda: "v")
    copy = pickle.loads(pickle.dumps(memo))
    assert dict(copy) == {"k": "v"} and copy.limit == 5
