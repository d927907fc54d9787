"""Key files, key variables and addresses: what the CurveZMQ set-up reads, and what it refuses.

Real files written by ``coopsim keys``' own code (pyzmq's certificate writer) and by hand."""

from __future__ import annotations

import os

import pytest
import zmq

from coopsim.net.security import (CLIENT_ENV, SERVER_ENV, ClientKeys, SecurityError,
                                  ServerKeys, advertised_host, child_env, create_keys,
                                  is_loopback, load_token, primary_address,
                                  require_keys)


@pytest.fixture
def folder(tmp_path):
    create_keys(tmp_path / "k")
    return tmp_path / "k"


def test_the_environment_gives_keys_as_files_or_the_server_key_itself(folder):
    mine = folder / "clients" / "client"
    files = {SERVER_ENV: str(mine / "server.key"), CLIENT_ENV: str(mine / "client.key_secret")}
    keys = ClientKeys.from_env(files)
    assert keys == ClientKeys.load(mine)
    raw = ClientKeys.from_env({**files, SERVER_ENV: keys.server.decode()})
    assert raw == keys
    assert ClientKeys.from_env({}) is None
    with pytest.raises(SecurityError, match=f"{SERVER_ENV} is not set"):
        ClientKeys.from_env({CLIENT_ENV: files[CLIENT_ENV]})


@pytest.mark.parametrize("text, why", [
    ("curve\n", "no public-key line"),
    ('curve\n    public-key = "short"\n', "public-key is not 40 Z85 characters"),
    ('curve\n    public-key = "' + "x" * 39 + '~"\n', "public-key is not 40 Z85 characters"),
])
def test_a_malformed_certificate_is_named_with_what_is_wrong(folder, text, why):
    (folder / "authorized" / "broken.key").write_text(text)
    with pytest.raises(SecurityError, match=why) as err:
        ServerKeys.load(folder)
    assert str(err.value).startswith(str(folder / "authorized" / "broken.key"))


def test_a_public_certificate_is_no_client_key_pair(folder):
    mine = folder / "clients" / "client"
    (mine / "client.key_secret").write_text((mine / "client.key").read_text())
    with pytest.raises(SecurityError, match="holds no secret-key"):
        ClientKeys.load(mine)


def test_a_server_folder_given_to_a_client_says_which_folder_to_give(folder):
    with pytest.raises(SecurityError, match="a client takes its own folder"):
        ClientKeys.load(folder)


def test_a_denied_bind_needs_keys_or_insecure_and_loopback_needs_neither():
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1"):
        assert is_loopback(host)
        require_keys(host, None, False)
    for host in ("0.0.0.0", "*", "192.0.2.7", "eth0", "robots.example"):
        assert not is_loopback(host)
        with pytest.raises(SecurityError, match=f"--bind {host} "):
            require_keys(host, None, False)
        require_keys(host, "DIR", False)
        require_keys(host, None, True)


def test_the_advertised_host_is_given_bound_or_this_machines_own():
    assert advertised_host("0.0.0.0", "sim.example") == "sim.example"
    assert advertised_host("127.0.0.2") == "127.0.0.2"
    found = primary_address()  # the namespace test of test_curve_servers.py pins it down
    if found is None:
        with pytest.raises(SecurityError, match="give --advertise HOST"):
            advertised_host("0.0.0.0")
    else:
        assert advertised_host("0.0.0.0") == found and not is_loopback(found)


def test_children_get_the_runs_key_variables_and_never_the_shells(monkeypatch):
    monkeypatch.setenv(SERVER_ENV, "/from/the/shell")
    monkeypatch.setenv(CLIENT_ENV, "/from/the/shell")
    assert SERVER_ENV not in child_env() and CLIENT_ENV not in child_env()
    assert child_env({SERVER_ENV: "a", CLIENT_ENV: "b"})[SERVER_ENV] == "a"
    assert child_env()["PATH"] == os.environ["PATH"]


def test_the_runs_own_key_files_are_private_and_name_its_pair(folder, tmp_path):
    keys = ClientKeys(ServerKeys.load(folder).public, *zmq.curve_keypair())
    env = keys.write(tmp_path)
    assert ClientKeys.from_env(env) == keys
    assert oct(os.stat(env[CLIENT_ENV]).st_mode & 0o777) == "0o600"


def test_a_token_comes_from_the_option_or_a_files_first_line(tmp_path):
    assert load_token("given", None) == "given"
    (tmp_path / "t").write_text("  from-the-file  \nignored\n")
    assert load_token(None, str(tmp_path / "t")) == "from-the-file"
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(SecurityError, match="empty:1: no token"):
        load_token(None, str(tmp_path / "empty"))
    with pytest.raises(SecurityError, match="not both"):
        load_token("given", str(tmp_path / "t"))
