"""The command line of CurveZMQ: ``coopsim keys``, and what --bind, --keys, --insecure,
--advertise and the JSON token options refuse, each as a real process (exit 2, one line)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
import zmq.auth

from coopsim.net.security import ClientKeys, ServerKeys

from curvehelpers import net  # noqa: F401 -- fixture
from nethelpers import ROOT

ONE = str(ROOT / "scenarios" / "one_robot.scenario")
SAMPLE = str(ROOT / "recordings" / "sample.mcap")
BRIEF = ["--headless", "--port", "0", "--no-controllers", "--duration", "0.2", "--speed", "0"]

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def coopsim(*args, timeout=60, env=None):
    """``coopsim ARGS`` as a process without a display."""
    env = {k: v for k, v in (env or os.environ).items() if k != "DISPLAY"}
    return subprocess.run([sys.executable, "-m", "coopsim", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=env, stdin=subprocess.DEVNULL)


def one_line_exit_2(result, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("coopsim: "), result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def test_keys_makes_server_and_client_pairs_as_zeromq_certificates(tmp_path):
    folder = tmp_path / "k"
    made = coopsim("keys", folder)
    assert made.returncode == 0, made.stderr
    assert "server keys:" in made.stdout and "client client:" in made.stdout
    server_public, server_secret = zmq.auth.load_certificate(folder / "server.key_secret")
    assert zmq.auth.load_certificate(folder / "server.key") == (server_public, None)
    mine = folder / "clients" / "client"
    public, secret = zmq.auth.load_certificate(mine / "client.key_secret")
    assert zmq.curve_public(secret) == public and zmq.curve_public(server_secret) == server_public
    assert zmq.auth.load_certificates(folder / "authorized") == {public: True}
    assert ClientKeys.load(mine) == ClientKeys(server_public, public, secret)
    assert ServerKeys.load(folder).public == server_public
    for secret_file in (folder / "server.key_secret", mine / "client.key_secret"):
        assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    again = coopsim("keys", folder)
    one_line_exit_2(again, "has keys already; --client NAME adds a client")
    assert zmq.auth.load_certificate(folder / "server.key_secret")[1] == server_secret


def test_keys_client_adds_an_authorized_pair_and_refuses_bad_or_taken_names(tmp_path):
    folder = tmp_path / "k"
    assert coopsim("keys", folder, "--client", "alice", "--client", "bob").returncode == 0
    assert sorted(p.name for p in (folder / "authorized").iterdir()) == ["alice.key", "bob.key"]
    assert not (folder / "clients" / "client").exists()  # names given: no default client
    assert coopsim("keys", folder, "--client", "carol").returncode == 0
    assert (folder / "clients" / "carol" / "client.key_secret").exists()
    one_line_exit_2(coopsim("keys", folder, "--client", "alice"), "'alice' exists already")
    one_line_exit_2(coopsim("keys", folder, "--client", "../evil"), "client name '../evil'")
    assert not (tmp_path / "evil").exists()


@pytest.mark.parametrize("command", [["run", ONE, *BRIEF], ["replay", SAMPLE, "--headless",
                                                            "--port", "0", "--exit-at-end"]])
def test_a_bind_beyond_loopback_without_keys_is_refused(command):
    result = coopsim(*command, "--bind", "0.0.0.0")
    one_line_exit_2(result, "--bind 0.0.0.0", "--keys DIR", "--insecure")


def test_insecure_serves_beyond_loopback_without_keys(net):
    result = coopsim("run", ONE, *BRIEF, "--bind", net.host, "--insecure")
    assert result.returncode == 0, result.stderr
    assert f"name server: tcp://{net.host}:" in result.stderr


def test_keys_and_advertise_show_in_the_endpoint(net, tmp_path):
    coopsim("keys", tmp_path / "k")
    result = coopsim("run", ONE, *BRIEF, "--bind", net.host, "--keys", tmp_path / "k",
                     "--advertise", "sim.example")
    assert result.returncode == 0, result.stderr
    assert "name server: tcp://sim.example:" in result.stderr


@pytest.mark.parametrize("args, words", [
    (["run", ONE, *BRIEF, "--keys", "no-such-folder"], ["no-such-folder: no such keys folder"]),
    (["replay", SAMPLE, "--headless", "--keys", "no-such-folder"], ["no such keys folder"]),
    (["view", "--keys", "no-such-folder"], ["no-such-folder/server.key: no such file"]),
    (["gateway", "--keys", "no-such-folder"], ["no-such-folder/server.key: no such file"]),
])
def test_missing_keys_are_one_line_and_exit_2(args, words):
    one_line_exit_2(coopsim(*args), *words)


def test_a_half_given_key_environment_is_one_line_and_exit_2(tmp_path):
    env = dict(os.environ, COOPSIM_SERVER_KEY=str(tmp_path / "server.key"))
    env.pop("COOPSIM_CLIENT_KEY", None)
    one_line_exit_2(coopsim("gateway", env=env), "COOPSIM_CLIENT_KEY is not set")


def test_with_keys_the_json_gateway_needs_a_token_on_loopback_too(tmp_path):
    coopsim("keys", tmp_path / "k")
    run = coopsim("run", ONE, *BRIEF, "--keys", tmp_path / "k", "--json-port", "0")
    one_line_exit_2(run, "CurveZMQ keys: give it a token")
    mine = tmp_path / "k" / "clients" / "client"
    one_line_exit_2(coopsim("gateway", "--keys", mine), "CurveZMQ keys: give it a token")


def test_the_json_gateway_beyond_loopback_needs_a_token(net, tmp_path):
    coopsim("keys", tmp_path / "k")
    base = ["run", ONE, *BRIEF, "--bind", net.host, "--keys", tmp_path / "k", "--json-port", "0"]
    one_line_exit_2(coopsim(*base), "JSON gateway", "token")
    one_line_exit_2(coopsim(*base, "--json-token", "short"), "at least 16")
    (tmp_path / "token").write_text("a-token-long-enough-to-count\n")
    result = coopsim(*base, "--json-token-file", tmp_path / "token")
    assert result.returncode == 0, result.stderr
    assert f"json gateway: {net.host}:" in result.stderr
    one_line_exit_2(coopsim(*base, "--json-token-file", tmp_path / "none"), "cannot read")
    env = dict(os.environ, COOPSIM_JSON_TOKEN="a-token-long-enough-to-count")
    assert coopsim(*base, env=env).returncode == 0
    one_line_exit_2(coopsim("gateway", "--bind", net.host if net.netns else "0.0.0.0"),
                    "would take anyone's commands")
