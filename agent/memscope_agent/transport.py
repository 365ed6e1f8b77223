"""Where the agent listens and how it serves every client the same stream.

    source thread ──append──> Journal (ordered chunks, shared) <──cursor── client thread ─> socket
                                                                <──cursor── client thread ─> socket

The journal keeps the whole stream, so a client that connects late still receives every
event from the start (past ``history_limit`` bytes, event chunks every client has
passed are let go and a late client is told how many events it missed). Each client has
its own thread and cursor: a slow or dead client never slows the source or the others.

The socket lives in a per-user private directory (0700, owned by the user, refused if
it is a link, foreign-owned or open to others), is created 0600, and a peer of another
uid (SO_PEERCRED) is closed at once. TCP is only opened when asked, on loopback only.
"""

import errno
import ipaddress
import json
import os
import socket
import stat
import struct
import tempfile
import threading
import time

from . import protocol as P


class TransportError(Exception):
    pass


def default_directory():
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        st = os.stat(runtime)
        if st.st_uid == os.getuid() and not st.st_mode & 0o022:
            return os.path.join(runtime, "memscope")
    return os.path.join(tempfile.gettempdir(), "memscope-%d" % os.getuid())


def check_private_directory(path, create=True):
    """Makes sure ``path`` is a directory only this user can enter; raises otherwise."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise TransportError("%s: directory does not exist" % path)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise TransportError("%s: is a symbolic link; refusing to use it for the agent socket" % path)
    if not stat.S_ISDIR(st.st_mode):
        raise TransportError("%s: not a directory" % path)
    if st.st_uid != os.getuid():
        raise TransportError("%s: owned by uid %d, not by this user (%d); refusing" % (path, st.st_uid, os.getuid()))
    if st.st_mode & 0o077:
        raise TransportError("%s: mode %o lets other users in; expected 0700" % (path, stat.S_IMODE(st.st_mode)))
    return path


def check_parent_directory(path):
    """For a socket path the user chose: its directory must be the user's and closed to
    others for writing (a world-writable /tmp is refused)."""
    parent = os.path.dirname(os.path.abspath(path)) or "."
    st = os.stat(parent)
    if st.st_uid != os.getuid():
        raise TransportError("%s: owned by uid %d, not by this user; refusing to put the socket there" % (parent, st.st_uid))
    if st.st_mode & 0o022:
        raise TransportError("%s: mode %o lets other users write; refusing to put the socket there" %
                             (parent, stat.S_IMODE(st.st_mode)))


def peer_uid(conn):
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def parse_tcp(spec):
    """'PORT', 'HOST:PORT' or '[::1]:PORT' -> (host, port); only loopback hosts."""
    host, port = "127.0.0.1", spec
    if spec.startswith("["):
        host, _, port = spec[1:].partition("]:")
    elif ":" in spec:
        host, port = spec.rsplit(":", 1)
    if host == "localhost":
        host = "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise TransportError("--tcp takes a loopback address (127.0.0.1, ::1), got '%s'" % host)
    if not ip.is_loopback:
        raise TransportError("--tcp listens on loopback only; '%s' is not a loopback address" % host)
    return host, int(port)


class Journal:
    DEFS, EVENTS, OTHER = 0, 1, 2

    def __init__(self, history_limit=2 << 30):
        self.cond = threading.Condition()
        self.chunks = []  # [kind, bytes or None (let go), event count]
        self.bytes = 0
        self.history_limit = history_limit
        self.closed = False
        self.cursors = {}
        self.total_events = 0

    def append(self, kind, data, events=0):
        if not data:
            return
        with self.cond:
            if self.closed:
                return
            self.chunks.append([kind, data, events])
            self.bytes += len(data)
            self.total_events += events
            if self.bytes > self.history_limit:
                self._trim()
            self.cond.notify_all()

    def close(self, final=b""):
        with self.cond:
            if self.closed:
                return
            if final:
                self.chunks.append([Journal.OTHER, final, 0])
            self.closed = True
            self.cond.notify_all()

    def _trim(self):
        limit = min(self.cursors.values()) if self.cursors else len(self.chunks)
        for c in self.chunks[:limit]:
            if self.bytes <= self.history_limit // 2:
                break
            if c[0] == Journal.EVENTS and c[1] is not None:
                self.bytes -= len(c[1])
                c[1] = None

    def read(self, key, cursor, timeout):
        """Chunks from ``cursor`` on, waiting up to ``timeout`` for some; (chunks, closed)."""
        with self.cond:
            if cursor >= len(self.chunks) and not self.closed:
                self.cond.wait(timeout)
            out = self.chunks[cursor:]
            self.cursors[key] = cursor + len(out)
            return out, self.closed and cursor + len(out) >= len(self.chunks)

    def forget(self, key):
        with self.cond:
            self.cursors.pop(key, None)


class Server:
    """Accepts clients on a Unix socket (and TCP when asked) and streams the journal."""

    def __init__(self, journal, hello_info, status, socket_path=None, tcp=None, log=None, socket_name=None):
        self.journal = journal
        self.hello_info = hello_info
        self.status = status  # callable -> dict
        self.log = log or (lambda msg: None)
        self.listeners = []
        self.threads = []
        self.clients = {}
        self.greeted = 0  # clients that passed the hello (and the token), ever
        self.lock = threading.Lock()
        self.stopping = False
        self.socket_path = None
        self.info_path = None
        self.token = None
        self._open_unix(socket_path, socket_name)
        if tcp:
            self._open_tcp(tcp)

    # listening
    def _open_unix(self, path, name=None):
        if path is None:
            directory = check_private_directory(default_directory())
            path = os.path.join(directory, name or "agent-%d.sock" % os.getpid())
        else:
            check_parent_directory(path)
        if os.path.lexists(path):
            st = os.lstat(path)
            if not stat.S_ISSOCK(st.st_mode):
                raise TransportError("%s: exists and is not a socket; refusing to replace it" % path)
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
                probe.close()
                raise TransportError("%s: another agent is listening there" % path)
            except OSError as e:
                probe.close()
                if e.errno not in (errno.ECONNREFUSED, errno.ENOENT):
                    raise
            os.unlink(path)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            s.bind(path)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        s.listen(8)
        self.socket_path = path
        self.listeners.append((s, True))

    def _open_tcp(self, spec):
        host, port = parse_tcp(spec)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(8)
        self.token = os.urandom(16).hex()
        self.tcp_address = "%s:%d" % (host if family == socket.AF_INET else "[%s]" % host, s.getsockname()[1])
        self.listeners.append((s, False))

    def write_info(self, extra):
        """agent-PID.json beside the socket: what the app's Attach dialog lists."""
        info = dict(self.hello_info)
        info.update(extra)
        info["socket"] = self.socket_path
        if self.token:
            info["tcp"] = self.tcp_address
            info["token"] = self.token
        path = os.path.splitext(self.socket_path)[0] + ".json"
        tmp = path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(info, f)
        os.replace(tmp, path)
        self.info_path = path

    def start(self):
        for s, is_unix in self.listeners:
            s.settimeout(0.2)
            t = threading.Thread(target=self._accept, args=(s, is_unix), name="memscope-accept", daemon=True)
            t.start()
            self.threads.append(t)

    def _accept(self, listener, is_unix):
        while not self.stopping:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.settimeout(None)
            if is_unix:
                try:
                    uid = peer_uid(conn)
                except OSError:
                    uid = -1
                if uid != os.getuid():
                    self.log("refused a client of uid %d" % uid)
                    conn.close()
                    continue
            t = threading.Thread(target=self._serve, args=(conn, is_unix), name="memscope-client", daemon=True)
            # Registered and started under the lock: finish() joins only started threads,
            # and the thread's own removal waits until it is registered.
            with self.lock:
                self.clients[t] = conn
                t.start()

    def _read_client_hello(self, conn, is_unix):
        conn.settimeout(5.0)
        try:
            head = _recv_exact(conn, P.HEADER.size)
            length, kind = P.HEADER.unpack(head)
            if kind != P.CLIENT_HELLO or not 1 <= length <= 65536:
                return False
            payload = _recv_exact(conn, length - 1)
            if payload[:4] != P.MAGIC:
                return False
            if not is_unix:
                info = json.loads(payload[8:] or b"{}")
                return info.get("token") == self.token
            return True
        except (OSError, ValueError, struct.error):
            return False
        finally:
            conn.settimeout(None)

    def _serve(self, conn, is_unix):
        key = threading.current_thread()
        try:
            if not self._read_client_hello(conn, is_unix):
                conn.sendall(P.json_message(P.ERROR, {"message": "wrong or missing token" if not is_unix else "no client hello"}))
                return
            conn.sendall(P.hello(self.hello_info))
            with self.lock:
                self.greeted += 1
            threading.Thread(target=self._drain_input, args=(conn,), daemon=True).start()
            cursor = 0
            lost = 0
            last_status = 0.0
            while True:
                chunks, done = self.journal.read(key, cursor, 0.25)
                cursor += len(chunks)
                out = []
                for kind, data, events in chunks:
                    if data is None:
                        lost += events
                        continue
                    if lost:
                        out.append(P.message(P.TRUNCATED, P.TRUNCATED_REC.pack(lost)))
                        lost = 0
                    out.append(data)
                now = time.monotonic()
                if now - last_status >= 0.5 and not done:
                    out.append(P.json_message(P.STATUS, self.status()))
                    last_status = now
                if out:
                    conn.sendall(b"".join(out))
                if done:
                    break
        except OSError:
            pass
        finally:
            self.journal.forget(key)
            with self.lock:
                self.clients.pop(key, None)
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    @staticmethod
    def _drain_input(conn):
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass

    def client_count(self):
        with self.lock:
            return len(self.clients)

    def wait_for_client(self, timeout=None):
        """Waits for a client that passed the hello: a stray connection or a wrong token
        does not start a replay that the real client would then miss."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self.lock:
                if self.greeted:
                    return True
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.01)

    def finish(self, timeout=10.0, await_first=False):
        """After the journal is closed: give clients up to ``timeout`` to receive it. With
        ``await_first`` (a recorder launched this program and is attaching), a program that
        ends before its first client came waits for one within the same ``timeout``: a short
        run would otherwise end unrecorded."""
        deadline = time.monotonic() + timeout
        if await_first:
            self.wait_for_client(timeout)
        while time.monotonic() < deadline:
            with self.lock:
                threads = list(self.clients)
            if not threads:
                break
            threads[0].join(max(0.0, deadline - time.monotonic()))
        self.close()

    def close(self):
        self.stopping = True
        for s, _ in self.listeners:
            try:
                s.close()
            except OSError:
                pass
        for p in (self.socket_path, self.info_path):
            if p:
                try:
                    os.unlink(p)
                except OSError:
                    pass


def _recv_exact(conn, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise OSError("connection closed")
        buf += chunk
    return bytes(buf)
