"""The robot hub's wait on descriptors (coopsim.net.hubwait): ZeroMQ's descriptors are
edge-triggered, so each source must still wake it however the sockets were used before."""

from __future__ import annotations

import os

import zmq

from coopsim.net.hubwait import FdWait

LONG = 20_000  # ms: a wait that should return at once; its bound only ends a broken test


def _hub():
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    monitor = router.get_monitor_socket(zmq.EVENT_DISCONNECTED)
    wake_r, wake_w = os.pipe()
    return ctx, router, port, monitor, (wake_r, wake_w), FdWait(router, monitor, wake_r)


def _take(router, wait) -> list:
    """The next request: a wake may come of another command first (a connection's pipe)."""
    for _ in range(100):
        asked, _, _ = wait.wait(LONG)
        assert asked, "no request woke the wait"
        try:
            return router.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            continue
    raise AssertionError("woken 100 times without a request")


def _close(ctx, router, monitor, pipe):
    router.disable_monitor()
    monitor.close(0)
    router.close(0)
    for fd in pipe:
        os.close(fd)
    ctx.term()


def test_every_close_wakes_the_wait_from_the_first_on():
    ctx, router, port, monitor, pipe, wait = _hub()
    try:
        for _ in range(3):  # the first close too: the monitor was looked at once when made
            peer = ctx.socket(zmq.DEALER)
            peer.connect(f"tcp://127.0.0.1:{port}")
            peer.send(b"hello")
            assert _take(router, wait)[-1] == b"hello"
            peer.close(0)
            closed = False
            while not closed:  # other commands (the pipe's end) may wake it first
                asked, closed, _ = wait.wait(LONG)
                assert asked or closed, "the close did not wake the wait"
            events = []
            while True:  # read to the end, as the hub's forget_closed does
                try:
                    events.append(monitor.recv_multipart(zmq.NOBLOCK))
                except zmq.Again:
                    break
            assert len(events) == 1
    finally:
        _close(ctx, router, monitor, pipe)


def test_a_request_left_waiting_behind_a_send_is_seen():
    ctx, router, port, monitor, pipe, wait = _hub()
    peer = ctx.socket(zmq.DEALER)
    try:
        peer.connect(f"tcp://127.0.0.1:{port}")
        peer.send(b"one")
        first = _take(router, wait)
        peer.send(b"two")
        assert peer.poll(LONG, zmq.POLLOUT)
        while not router.poll(0):  # "two" is in the socket: its descriptor's edge is spent
            wait.wait(10)
        router.send_multipart([first[0], b"reply"])  # a send takes the socket's commands
        assert wait.wait(LONG)[0], "a waiting request was not seen"
        assert router.recv_multipart(zmq.NOBLOCK)[-1] == b"two"
    finally:
        peer.close(0)
        _close(ctx, router, monitor, pipe)


def test_the_wake_pipe_wakes_it():
    ctx, router, port, monitor, pipe, wait = _hub()
    try:
        os.write(pipe[1], b"w")
        assert wait.wait(LONG) == (False, False, True)
    finally:
        _close(ctx, router, monitor, pipe)
