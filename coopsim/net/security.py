"""CurveZMQ for every server of a run: the keys folder, the ZAP check, socket configuration.

A keys folder (``coopsim keys DIR``) holds ZeroMQ certificates in the format
``zmq.auth.create_certificates`` writes (Z85 keys in ``public-key = "..."`` lines)::

    DIR/server.key                  the servers' public key: every client needs it
    DIR/server.key_secret           the servers' key pair: stays with the servers
    DIR/authorized/NAME.key         the client public keys the servers accept, one file each
    DIR/clients/NAME/server.key     a copy of server.key          } client NAME's folder:
    DIR/clients/NAME/client.key     NAME's public key             } give it to NAME
    DIR/clients/NAME/client.key_secret   NAME's key pair          }

With ``--keys DIR`` every server socket of a run (name server, ``/sim``, the robots' ROUTER, the
state stream's PUB, a replay's servers) is a Curve server, and a ZAP handler on the run's ZeroMQ
context accepts a client only if its public key is in ``DIR/authorized`` (read again whenever a
file there is added or removed) or is the run's own key pair (:attr:`Guard.local`, made at start
and kept in memory, for the controllers, viewer and gateway the run starts itself). A client
needs the server's public key and a key pair of its own; it finds them in a client folder, or in
``$COOPSIM_SERVER_KEY`` (a certificate file, or the 40-character key) and ``$COOPSIM_CLIENT_KEY``
(a secret certificate file: a secret key never travels in the environment).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import shutil
import socket
import stat
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import zmq
import zmq.auth
from zmq.utils import z85 as _z85

from ..model.errors import CoopsimError

log = logging.getLogger(__name__)

SERVER_ENV = "COOPSIM_SERVER_KEY"
CLIENT_ENV = "COOPSIM_CLIENT_KEY"
ZAP_DOMAIN = "coopsim"
SERVER, CLIENT = "server", "client"  # certificate base names
_Z85 = re.compile(rb"[0-9a-zA-Z.\-:+=^!/*?&<>()\[\]{}@%$#]{40}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_WILDCARDS = {"0.0.0.0", "*", "::", "[::]"}


class SecurityError(CoopsimError):
    """A keys folder or key file is missing or malformed, or a bind needs keys it was not given."""


# -- addresses -------------------------------------------------------------------------------------

def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host or interface name: it may be reachable from elsewhere


def require_keys(bind: str, keys, insecure: bool) -> None:
    """Refuse to serve beyond loopback without Curve keys, unless the user said ``--insecure``.

    Raises:
        SecurityError: ``bind`` is not a loopback address and neither keys nor insecure were given.
    """
    if keys is None and not insecure and not is_loopback(bind):
        raise SecurityError(
            f"--bind {bind} would serve anyone who reaches this machine, unauthenticated: "
            "give --keys DIR (make one with 'coopsim keys DIR') or, on a network you trust, "
            "--insecure")


def advertised_host(bind: str, advertise: str | None = None) -> str:
    """The host written into the endpoints the name server hands out.

    ``advertise`` if given; else the bind address; for a wildcard bind (``0.0.0.0``) this
    machine's primary address (that of its default route's interface).

    Raises:
        SecurityError: a wildcard bind and no address to advertise could be found.
    """
    if advertise:
        return advertise
    if bind not in _WILDCARDS:
        return bind
    found = primary_address()
    if found is None:
        raise SecurityError(f"--bind {bind}: cannot tell which address other machines reach "
                            "this one at; give --advertise HOST")
    return found


def primary_address() -> str | None:
    """The IPv4 address of the interface of the default route (Linux), else a non-loopback
    address of this host's name, else None. Sends nothing on the network."""
    try:
        with open("/proc/net/route", encoding="ascii") as routes:
            rows = [line.split() for line in routes.readlines()[1:]]
        iface = next(r[0] for r in rows if len(r) > 2 and r[1] == "00000000")
        import fcntl  # POSIX only: imported where it is used

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            packed = fcntl.ioctl(probe.fileno(), 0x8915,  # SIOCGIFADDR
                                 struct.pack("256s", iface[:15].encode()))
        return socket.inet_ntoa(packed[20:24])
    except (OSError, StopIteration, ImportError):
        pass
    try:
        names = socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        return None
    return next((a for a in names if not is_loopback(a)), None)


# -- key files -------------------------------------------------------------------------------------

def read_certificate(path: str | Path, secret: bool) -> tuple[bytes, bytes | None]:
    """The (public, secret) Z85 keys of a certificate file; secret is None for a public one.

    Raises:
        SecurityError: the file is missing, unreadable, or lacks a well-formed key.
    """
    path = Path(path)
    if not path.is_file():
        raise SecurityError(f"{path}: no such file (a ZeroMQ certificate, as 'coopsim keys' "
                            "writes, is needed here)")
    try:
        public, secret_key = zmq.auth.load_certificate(path)
    except OSError as exc:
        raise SecurityError(f"{path}: {exc.strerror or exc}") from None
    except ValueError:
        raise SecurityError(f"{path}: no public-key line; not a ZeroMQ certificate") from None
    for label, key in (("public-key", public), ("secret-key", secret_key)):
        if key is not None and not _Z85.fullmatch(key):
            raise SecurityError(f"{path}: its {label} is not 40 Z85 characters")
    if secret and secret_key is None:
        raise SecurityError(f"{path}: holds no secret-key (give the .key_secret file)")
    return public, secret_key


def _write_pair(folder: Path, name: str) -> tuple[Path, Path]:
    old = os.umask(0o077)  # pyzmq opens with the umask's mode: the secret is never readable
    try:
        public, secret = zmq.auth.create_certificates(folder, name)
    finally:
        os.umask(old)
    os.chmod(public, 0o644)
    return Path(public), Path(secret)


def create_keys(folder: str | Path, clients: tuple[str, ...] = ()) -> list[str]:
    """Make ``folder``'s server key pair (if it has none) and one key pair per client name
    (without names: a new folder gets one client, ``client``).

    Returns:
        One line per thing made, for the user.

    Raises:
        SecurityError: a bad client name, or a client that already exists (nothing is changed).
    """
    folder = Path(folder)
    has_server = (folder / f"{SERVER}.key_secret").exists()
    clients = _new_clients(folder, clients, has_server)
    for sub in ("", "authorized", "clients"):
        (folder / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
    made = []
    if not has_server:
        _write_pair(folder, SERVER)
        made.append(f"server keys: {folder / 'server.key_secret'} (stays here; serve with "
                    f"--keys {folder})")
    read_certificate(folder / f"{SERVER}.key_secret", secret=True)
    for name in clients:
        mine = folder / "clients" / name
        mine.mkdir(mode=0o700, parents=True)
        public, _ = _write_pair(mine, CLIENT)
        shutil.copyfile(folder / f"{SERVER}.key", mine / f"{SERVER}.key")
        shutil.copyfile(public, folder / "authorized" / f"{name}.key")
        made.append(f"client {name}: {mine} (give this folder to {name}; revoke by deleting "
                    f"{folder / 'authorized' / (name + '.key')})")
    return made


def _new_clients(folder: Path, clients: tuple[str, ...], has_server: bool) -> tuple[str, ...]:
    """The client names to make, checked before anything is written."""
    if not clients:
        if has_server:
            raise SecurityError(f"{folder}: has keys already; --client NAME adds a client")
        clients = (CLIENT,)
    if len(set(clients)) != len(clients):
        raise SecurityError("a client name is given twice")
    for name in clients:
        if not _NAME.fullmatch(name):
            raise SecurityError(f"client name {name!r}: use letters, digits, '_', '.', '-'")
        if (folder / "authorized" / f"{name}.key").exists() or (folder / "clients" / name).exists():
            raise SecurityError(f"{folder}: client {name!r} exists already (delete "
                                f"{folder / 'clients' / name} and its authorized key to renew it)")
    if not has_server and (folder / f"{SERVER}.key").exists():
        raise SecurityError(f"{folder}: has server.key but no server.key_secret")
    return clients


@dataclass(frozen=True)
class ServerKeys:
    """What a Curve server needs: its key pair and where the accepted client keys are.

    Attributes:
        public, secret: The servers' Z85 keys.
        authorized: Folder of accepted client public keys (``*.key``).
    """

    public: bytes
    secret: bytes
    authorized: Path

    @classmethod
    def load(cls, folder: str | Path) -> "ServerKeys":
        """Read a keys folder made by ``coopsim keys``; checks every authorized key too.

        Raises:
            SecurityError: anything missing or malformed (the file is named).
        """
        folder = Path(folder)
        if not folder.is_dir():
            raise SecurityError(f"{folder}: no such keys folder (make one with "
                                f"'coopsim keys {folder}')")
        secret_file = folder / f"{SERVER}.key_secret"
        public, secret = read_certificate(secret_file, secret=True)
        if stat.S_IMODE(secret_file.stat().st_mode) & 0o077:
            log.warning("%s can be read by other users: chmod 600 it", secret_file)
        authorized = folder / "authorized"
        if not authorized.is_dir():
            raise SecurityError(f"{authorized}: missing (the client public keys the servers "
                                "accept go there)")
        for path in sorted(authorized.glob("*.key")):
            read_certificate(path, secret=False)
        return cls(public, secret, authorized)


@dataclass(frozen=True)
class ClientKeys:
    """What a Curve client needs: the server's public key and a key pair of its own (Z85)."""

    server: bytes
    public: bytes
    secret: bytes

    @classmethod
    def load(cls, folder: str | Path) -> "ClientKeys":
        """Read a client folder (``server.key`` and ``client.key_secret``).

        Raises:
            SecurityError: a file is missing or malformed.
        """
        folder = Path(folder)
        if not (folder / f"{CLIENT}.key_secret").exists() and (folder / "clients").is_dir():
            raise SecurityError(f"{folder} is a server's keys folder; a client takes its own "
                                f"folder, {folder / 'clients' / 'NAME'}")
        return cls.from_files(folder / f"{SERVER}.key", folder / f"{CLIENT}.key_secret")

    @classmethod
    def from_files(cls, server: str | Path, client: str | Path,
                   raw: bool = False) -> "ClientKeys":
        """From a server certificate and a client secret certificate; with ``raw``, a ``server``
        of 40 Z85 characters that names no file is the server's key itself."""
        if raw and _Z85.fullmatch(os.fsencode(server)) and not os.path.exists(server):
            server_key = os.fsencode(server)
        else:
            server_key = read_certificate(server, secret=False)[0]
        public, secret = read_certificate(client, secret=True)
        return cls(server_key, public, secret)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "ClientKeys | None":
        """From ``$COOPSIM_SERVER_KEY`` and ``$COOPSIM_CLIENT_KEY``; None when neither is set.

        Raises:
            SecurityError: only one is set, or a file is missing or malformed.
        """
        server, client = env.get(SERVER_ENV), env.get(CLIENT_ENV)
        if not server and not client:
            return None
        if not server or not client:
            missing = SERVER_ENV if not server else CLIENT_ENV
            raise SecurityError(f"{missing} is not set: a Curve client needs both "
                                f"{SERVER_ENV} and {CLIENT_ENV}")
        return cls.from_files(server, client, raw=True)

    @classmethod
    def resolve(cls, keys) -> "ClientKeys | None":
        """A ClientKeys from what an API was given: ClientKeys, a client folder, or None (the
        environment's, if any)."""
        if keys is None:
            return cls.from_env()
        if isinstance(keys, ClientKeys):
            return keys
        return cls.load(keys)

    def apply(self, sock: zmq.Socket) -> None:
        """Make ``sock`` a Curve client of the server (call before connect)."""
        sock.curve_serverkey = self.server
        sock.curve_publickey = self.public
        sock.curve_secretkey = self.secret

    def write(self, folder: str | Path) -> dict[str, str]:
        """Write a client folder; returns the environment variables that point at it."""
        folder = Path(folder)
        server = folder / f"{SERVER}.key"
        server.write_text(f'metadata\ncurve\n    public-key = "{self.server.decode()}"\n')
        secret = folder / f"{CLIENT}.key_secret"
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(f'metadata\ncurve\n    public-key = "{self.public.decode()}"\n'
                      f'    secret-key = "{self.secret.decode()}"\n')
        return {SERVER_ENV: str(server), CLIENT_ENV: str(secret)}


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a child client: key variables replaced by ``extra``
    (none inherited from the user's shell when the run has no Curve)."""
    env = {k: v for k, v in os.environ.items() if k not in (SERVER_ENV, CLIENT_ENV)}
    env.update(extra or {})
    return env


# -- the server side -------------------------------------------------------------------------------

RUN_USER = "coopsim-run"  # the User-Id of the run's own key pair (its controllers, viewer, gateway)


class _Authorized:
    """The ZAP credentials check: the key is the run's own, or a file in the authorized folder.

    The folder is listed at each handshake (one per connection, not per message) and read again
    when a file was added, removed or changed, so keys can be granted and revoked while serving.
    """

    def __init__(self, folder: Path, own: set[bytes]) -> None:
        self.folder, self.own = folder, own
        self._stamp: tuple | None = None
        self._keys: frozenset[bytes] = frozenset()
        self._names: dict[bytes, str] = {}  # listed key -> its file's name (alice.key: alice)

    def user_id(self, key: bytes) -> str:
        """The User-Id a connection with this (binary) key carries: the run's own pair is
        ``coopsim-run``, a listed key its file's name; the robots' owner is named by it."""
        z85 = _z85.encode(key)
        if z85 in self.own:
            return RUN_USER
        self._current()
        return self._names.get(z85, z85.decode("ascii"))

    def callback(self, domain: str, key: bytes) -> bool:
        try:
            allowed = key in self.own or key in self._current()
        except Exception:  # noqa: BLE001 -- the ZAP thread must live: fail closed, say why
            log.exception("ZAP: checking a client key failed; the client is refused")
            return False
        if not allowed:
            log.info("refused a CurveZMQ client: its key %s is not in %s", key.decode(),
                     self.folder)
        return allowed

    def _current(self) -> frozenset[bytes]:
        try:
            files = sorted(self.folder.glob("*.key"))
            stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
        except OSError:
            return frozenset()  # the folder is gone: nobody but the run's own
        if stamp != self._stamp:
            names = {}
            for path in files:
                try:
                    names[read_certificate(path, secret=False)[0]] = path.stem
                except SecurityError as exc:
                    log.warning("ignoring %s", exc)
            self._keys, self._names, self._stamp = frozenset(names), names, stamp
        return self._keys


class Guard:
    """Curve on every server socket of one ZeroMQ context.

    Start it before the first server binds and close it after the last server has closed, before
    ``ctx.term()``: a Curve server with no ZAP handler on its context would accept any client key
    (its sockets also set ZAP_ENFORCE_DOMAIN, so libzmq 4.3 refuses everyone then instead).

    Args:
        ctx: The context every server socket of the run is made in.
        keys: The servers' keys.

    Attributes:
        local: A key pair made for this run and accepted by it alone: the run's own clients
            (launched controllers, its viewer, its gateway) use it.
    """

    def __init__(self, ctx: zmq.Context, keys: ServerKeys) -> None:
        from zmq.auth.thread import ThreadAuthenticator  # starts asyncio machinery: load late

        self.keys = keys
        public, secret = zmq.curve_keypair()
        self.local = ClientKeys(keys.public, public, secret)
        self._auth = ThreadAuthenticator(ctx, log=logging.getLogger("coopsim.zap"))
        self._auth.start()
        authorized = _Authorized(keys.authorized, {public})
        self._auth.configure_curve_callback(ZAP_DOMAIN, authorized)
        self._auth.curve_user_id = authorized.user_id  # the owner's name (docs/protocol.md)
        self._folder: str | None = None

    def configure(self, sock: zmq.Socket) -> None:
        """Make ``sock`` a Curve server checked by this guard (call before bind)."""
        sock.curve_secretkey = self.keys.secret
        sock.curve_publickey = self.keys.public
        sock.curve_server = True
        sock.zap_domain = ZAP_DOMAIN.encode()
        try:  # fail closed: without a ZAP handler libzmq would let any key in
            sock.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)
        except (AttributeError, zmq.ZMQError):
            pass  # a libzmq before 4.3: the guard's handler runs for the socket's whole life

    def local_env(self) -> dict[str, str]:
        """Environment variables giving a child process :attr:`local` (files in a private
        temporary folder, removed by :meth:`close`)."""
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="coopsim-keys-")  # mode 0700
        return self.local.write(self._folder)

    def close(self) -> None:
        """Stop the ZAP handler and remove the temporary key files."""
        self._auth.stop()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def guarded(ctx: zmq.Context, keys: ServerKeys | None) -> Guard | None:
    """A started :class:`Guard` for ``ctx``, or None without keys."""
    return Guard(ctx, keys) if keys is not None else None


def load_token(token: str | None, path: str | None) -> str | None:
    """The JSON gateway's token: given, or the first line of the file at ``path``.

    Raises:
        SecurityError: both given, or the file is unreadable or empty.
    """
    if path is None:
        return token
    if token is not None:
        raise SecurityError("give the JSON gateway's token once: --json-token or "
                            "--json-token-file, not both")
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SecurityError(f"{path}: cannot read the token: {exc}") from None
    if not lines or not lines[0].strip():
        raise SecurityError(f"{path}:1: no token on the first line")
    return lines[0].strip()
