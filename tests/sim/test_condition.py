"""sim/condition.py: a condition variable that counts the threads waiting on it."""

import threading

from coopsim.sim.condition import WatchedCondition


def test_waiting_counts_a_thread_inside_wait_and_drops_when_it_returns():
    cond = WatchedCondition(threading.RLock())
    inside, go = threading.Event(), []

    def waiter():
        with cond:
            inside.set()
            cond.wait_for(lambda: go)
    thread = threading.Thread(target=waiter)
    thread.start()
    assert inside.wait(30)
    with cond:  # the waiter released the lock inside wait: it counts now
        assert cond.waiting == 1
        go.append(1)
        cond.notify_all()
    thread.join(30)
    assert not thread.is_alive() and cond.waiting == 0


def test_a_timed_out_wait_no_longer_counts():
    cond = WatchedCondition()
    with cond:
        assert cond.wait(0.001) is False
        assert cond.waiting == 0
