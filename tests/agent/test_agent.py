"""The agent without torch or a GPU: protocol, safe unpickling, the socket and its
permissions, replay served to real clients, the environment switch.

    PYTHONPATH=agent python3 -m unittest discover -s tests/agent -v
"""

import json
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
AGENT_DIR = os.path.join(ROOT, "agent")
SAMPLES = os.path.join(ROOT, "samples")
TESTDATA = os.path.join(ROOT, "tests", "data")
sys.path.insert(0, AGENT_DIR)

from memscope_agent import client, protocol as P, safe_pickle  # noqa: E402
from memscope_agent.transport import TransportError, check_private_directory, parse_tcp  # noqa: E402


def agent_env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = AGENT_DIR + os.pathsep + env.get("PYTHONPATH", "")
    env["MEMSCOPE_AGENT_QUIET"] = "1"
    env.update(extra)
    return env


def normalized(snap):
    """A snapshot dict as the protocol carries it (tuples as tuples, every key present)."""
    out = {"segments": [], "device_traces": [], "allocator_settings": snap.get("allocator_settings") or {},
           "external_annotations": snap.get("external_annotations") or []}
    for s in snap.get("segments") or []:
        out["segments"].append(dict(s, segment_pool_id=tuple(s.get("segment_pool_id") or (0, 0))))
    for trace in snap.get("device_traces") or []:
        out["device_traces"].append(trace)
    return out


class ReplayAgent:
    def __init__(self, path, speed="0", extra=(), directory=None):
        self.dir = directory or tempfile.mkdtemp(prefix="msa-")
        self.socket = os.path.join(self.dir, "a.sock")
        self.proc = subprocess.Popen([sys.executable, "-m", "memscope_agent", "--replay", path, "--speed", speed,
                                      "--socket", self.socket, "--linger", "5"] + list(extra), env=agent_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.proc.stdout.close()
        self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ProtocolTest(unittest.TestCase):
    def test_encoder_decoder_round_trip(self):
        enc = P.Encoder()
        frames = [{"filename": "train.py", "line": 3, "name": "step"}, {"filename": "x.py", "line": 1, "name": "f"}]
        enc.settings({"a": 1, "b": {"c": True}})
        enc.event(0, {"action": "alloc", "addr": 1 << 40, "size": 512, "stream": 0, "time_us": 5, "frames": frames,
                      "user_metadata": "", "compile_context": "N/A"})
        enc.event(0, {"action": "oom", "device_free": 77, "size": 1 << 33, "stream": 3, "time_us": 6, "frames": [],
                      "user_metadata": "m", "compile_context": "N/A"})
        enc.event(1, {"action": "segment_map", "addr": 4096, "size": 2 << 20, "stream": 0, "time_us": 7,
                      "frames": frames, "user_metadata": "", "compile_context": "N/A"})
        enc.annotation({"name": "Optimizer.step", "stage": "END", "device": 0, "time_us": 9})
        defs, body, n = enc.take()
        self.assertEqual(n, 3)
        d = P.Decoder()
        d.feed(P.hello({"pid": 1}))
        stream = defs + body
        for i in range(0, len(stream), 7):  # any split of the bytes decodes the same
            d.feed(stream[i:i + 7])
        self.assertEqual(d.event_count, 3)
        self.assertEqual(d.devices[0][0]["addr"], 1 << 40)
        self.assertEqual(d.devices[0][0]["frames"], frames)
        self.assertEqual(d.devices[0][1]["device_free"], 77)
        self.assertEqual(d.devices[1][0]["action"], "segment_map")
        self.assertEqual(d.annotations[0]["stage"], "END")
        self.assertEqual(d.settings, {"a": 1, "b": {"c": True}})

    def test_record_sizes_match_docs(self):
        self.assertEqual(P.EVENT.size, 48)
        self.assertEqual(P.SEGMENT.size, 80)
        self.assertEqual(P.BLOCK.size, 32)
        self.assertEqual(P.ANNOTATION_REC.size, 16)

    def test_decoder_refuses_oversized_and_undefined(self):
        d = P.Decoder()
        d.feed(P.hello({}))
        with self.assertRaises(P.ProtocolError):
            d.feed(struct.pack("<IB", P.MAX_MESSAGE + 1, P.EVENTS))
        d = P.Decoder()
        d.feed(P.hello({}))
        bad = P.EVENTS_HEAD.pack(0, 0, 1) + P.EVENT.pack(0, 1, 0, 12345, 1, 1, 0, 0, 0, 0)
        with self.assertRaises(P.ProtocolError):
            d.feed(P.message(P.EVENTS, bad))


class SafePickleTest(unittest.TestCase):
    def test_refuses_globals(self):
        for name in ("evil_global_os_system.pickle", "evil_stack_global.pickle"):
            with self.subTest(name=name):
                marker = os.path.join(tempfile.gettempdir(), "memscope_evil_marker")
                with self.assertRaises(safe_pickle.RefusedPickle):
                    safe_pickle.load_file(os.path.join(TESTDATA, name))
                self.assertFalse(os.path.exists(marker))

    def test_reads_compressed_and_refuses_non_snapshots(self):
        snap = safe_pickle.load_file(os.path.join(TESTDATA, "release.pickle.gz"))
        self.assertIn("device_traces", snap)
        with self.assertRaises(ValueError):
            safe_pickle.load_file(os.path.join(TESTDATA, "not_a_snapshot.pickle"))


class TransportTest(unittest.TestCase):
    def test_private_directory_rules(self):
        base = tempfile.mkdtemp(prefix="msa-")
        try:
            d = os.path.join(base, "ok")
            check_private_directory(d)  # created 0700
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700)
            os.chmod(d, 0o777)
            with self.assertRaisesRegex(TransportError, "lets other users in"):
                check_private_directory(d)
            link = os.path.join(base, "link")
            os.chmod(d, 0o700)
            os.symlink(d, link)
            with self.assertRaisesRegex(TransportError, "symbolic link"):
                check_private_directory(link)
        finally:
            shutil.rmtree(base)

    def test_socket_in_world_writable_directory_refused(self):
        base = tempfile.mkdtemp(prefix="msa-")
        os.chmod(base, 0o777)
        try:
            r = subprocess.run([sys.executable, "-m", "memscope_agent", "--replay",
                                os.path.join(SAMPLES, "linear3.pickle"), "--socket", os.path.join(base, "a.sock")],
                               env=agent_env(), capture_output=True, text=True, timeout=60)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("lets other users write", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(base, "a.sock")))
        finally:
            shutil.rmtree(base)

    def test_tcp_is_loopback_only(self):
        self.assertEqual(parse_tcp("5555"), ("127.0.0.1", 5555))
        self.assertEqual(parse_tcp("[::1]:7"), ("::1", 7))
        for bad in ("0.0.0.0:1", "192.168.1.2:5", "example.com:5"):
            with self.assertRaises(TransportError):
                parse_tcp(bad)


class ReplayServeTest(unittest.TestCase):
    def serve_and_compare(self, name):
        path = os.path.join(SAMPLES, name)
        agent = ReplayAgent(path)
        try:
            s = client.connect(agent.socket)
            mode = stat.S_IMODE(os.stat(agent.socket).st_mode)
            self.assertEqual(mode, 0o600)
            d = client.receive(s, timeout=60)
            s.close()
            self.assertEqual(d.end.get("reason"), "replay_done")
            self.assertEqual(d.hello["mode"], "replay")
            self.assertEqual(normalized(d.snapshot()), normalized(safe_pickle.load_file(path)))
            self.assertEqual(agent.proc.wait(30), 0)
            self.assertFalse(os.path.exists(agent.socket))  # removed at exit
        finally:
            agent.close()

    def test_replay_equals_file(self):
        for name in ("linear3.pickle", "oom.pickle", "llm_bs16.pickle", "libtorch_mlp.pickle"):
            with self.subTest(name=name):
                self.serve_and_compare(name)

    def test_two_clients_get_the_same_stream(self):
        path = os.path.join(SAMPLES, "llm_bs16.pickle")  # 0.67 s of events, served over 1.3 s
        agent = ReplayAgent(path, speed="0.5")
        try:
            a = client.connect(agent.socket)
            time.sleep(0.3)
            b = client.connect(agent.socket)  # joins late: still gets everything from the start
            quitter = client.connect(agent.socket)
            quitter.close()  # a client that leaves at once disturbs no one
            results = {}
            threads = [threading.Thread(target=lambda k, s: results.__setitem__(k, client.receive(s, timeout=60)),
                                        args=(k, s)) for k, s in (("a", a), ("b", b))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            expected = normalized(safe_pickle.load_file(path))
            self.assertEqual(normalized(results["a"].snapshot()), expected)
            self.assertEqual(normalized(results["b"].snapshot()), expected)
        finally:
            agent.close()

    def test_client_without_hello_is_dropped(self):
        # Recorded pace, and the good client connected first: the replay starts with its
        # first client and the agent exits once it is done, so a good client connecting
        # only after the bad one had been dropped could find the agent gone.
        agent = ReplayAgent(os.path.join(SAMPLES, "linear3.pickle"), speed="1")
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(agent.socket) and time.monotonic() < deadline:
                time.sleep(0.05)
            good = client.connect(agent.socket)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(agent.socket)
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            s.settimeout(10)
            data = s.recv(4096)
            d = P.Decoder()
            self.assertRaises(P.ProtocolError, d.feed, data)  # an ERROR message, no HELLO
            self.assertEqual(data[4], P.ERROR)
            s.close()
            # the agent still serves the other client
            self.assertGreater(client.receive(good, timeout=60).event_count, 0)
        finally:
            agent.close()

    @unittest.skipUnless(hasattr(os, "geteuid") and os.geteuid() == 0, "needs root to run the agent as another user")
    def test_client_of_another_user_is_refused(self):
        # SO_PEERCRED: the agent runs as nobody in nobody's private directory; root can
        # reach the socket (it passes every directory) but is another user, so the agent
        # closes the connection without a byte. A client of the agent's own user is served.
        nobody = 65534
        # The system interpreter: one under root's home (pyenv) is closed to nobody.
        python = "/usr/bin/python3"
        if not os.path.exists(python):
            self.skipTest("no /usr/bin/python3 for the other user")
        home = tempfile.mkdtemp(prefix="msa-uid-")
        try:
            shutil.copytree(os.path.join(AGENT_DIR, "memscope_agent"), os.path.join(home, "memscope_agent"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy(os.path.join(SAMPLES, "linear3.pickle"), home)
            sock = os.path.join(home, "run", "a.sock")
            os.mkdir(os.path.dirname(sock), 0o700)
            for dirpath, dirnames, filenames in os.walk(home):
                for name in [dirpath] + [os.path.join(dirpath, f) for f in dirnames + filenames]:
                    os.chown(name, nobody, nobody)

            def as_nobody():
                os.setgid(nobody)
                os.setuid(nobody)

            env = dict(os.environ, PYTHONPATH=home, MEMSCOPE_AGENT_QUIET="1", HOME=home, PYTHONDONTWRITEBYTECODE="1")
            agent = subprocess.Popen([python, "-m", "memscope_agent", "--replay", os.path.join(home, "linear3.pickle"),
                                      "--speed", "0", "--socket", sock, "--linger", "5"], env=env, cwd=home,
                                     preexec_fn=as_nobody, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                deadline = time.monotonic() + 30
                while not os.path.exists(sock) and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.assertEqual(os.stat(sock).st_uid, nobody)
                # The socket exists from bind(), before listen(): retry a refused connect.
                while True:
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.settimeout(10)
                    try:
                        s.connect(sock)
                        break
                    except ConnectionRefusedError:
                        s.close()
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.05)
                try:
                    s.sendall(client.client_hello(None))
                except OSError:
                    pass  # closed before the hello arrived: refused all the same
                try:
                    data = s.recv(4096)
                except ConnectionResetError:
                    data = b""
                s.close()
                self.assertEqual(data, b"")
                # The same agent serves its own user.
                same = subprocess.run([python, "-c",
                                       "import sys; from memscope_agent import client; "
                                       "s = client.connect(sys.argv[1]); print(client.receive(s, timeout=60).event_count)",
                                       sock], env=env, cwd=home, preexec_fn=as_nobody, capture_output=True, text=True,
                                      timeout=90)
                self.assertEqual(same.returncode, 0, same.stderr)
                self.assertGreater(int(same.stdout.strip()), 0)
            finally:
                if agent.poll() is None:
                    agent.kill()
                agent.wait(10)
                agent.stdout.close()
                agent.stderr.close()
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def test_stray_connection_does_not_start_the_replay(self):
        # Regression: a connection that never says hello used to start the replay, which
        # ran to its end and took the agent down before the real client came.
        agent = ReplayAgent(os.path.join(SAMPLES, "linear3.pickle"))
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(agent.socket) and time.monotonic() < deadline:
                time.sleep(0.05)
            stray = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            stray.connect(agent.socket)
            stray.sendall(b"GET / HTTP/1.0\r\n\r\n")
            stray.settimeout(10)
            self.assertEqual(stray.recv(4096)[4], P.ERROR)
            stray.close()
            time.sleep(1.0)
            self.assertIsNone(agent.proc.poll())
            d = client.receive(client.connect(agent.socket), timeout=60)
            self.assertEqual(d.end.get("reason"), "replay_done")
            self.assertEqual(normalized(d.snapshot()), normalized(safe_pickle.load_file(os.path.join(SAMPLES, "linear3.pickle"))))
        finally:
            agent.close()

    def test_tcp_needs_the_token(self):
        agent = ReplayAgent(os.path.join(SAMPLES, "linear3.pickle"), extra=["--tcp", "127.0.0.1:0"])
        try:
            line = agent.proc.stdout.readline().decode()
            self.assertIn("token", line)
            address, token = line.split()[2], line.split()[4]
            wrong = client.connect(tcp=address, token="nope")
            wrong.settimeout(10)
            self.assertEqual(wrong.recv(4096)[4], P.ERROR)
            wrong.close()
            right = client.connect(tcp=address, token=token)
            self.assertGreater(client.receive(right, timeout=60).event_count, 0)
        finally:
            agent.close()

    def test_history_limit_tells_late_clients(self):
        from memscope_agent.transport import Journal

        j = Journal(history_limit=100)
        j.append(Journal.DEFS, b"d" * 10)
        for _ in range(10):
            j.append(Journal.EVENTS, b"e" * 50, 5)
        kept = [c for c in j.chunks if c[1] is not None]
        self.assertEqual(kept[0][0], Journal.DEFS)  # definitions are never let go
        self.assertLess(sum(len(c[1]) for c in kept), 200)
        self.assertGreater(sum(c[2] for c in j.chunks if c[1] is None), 0)


class StartModesTest(unittest.TestCase):
    def test_environment_switch_starts_agent_in_unmodified_script(self):
        d = tempfile.mkdtemp(prefix="msa-")
        sock = os.path.join(d, "env.sock")
        script = os.path.join(d, "train.py")
        with open(script, "w") as f:
            f.write("import os, time\nassert 'MEMSCOPE_AGENT' not in os.environ\ntime.sleep(1.5)\nprint('trained')\n")
        try:
            env = agent_env(MEMSCOPE_AGENT="1", MEMSCOPE_AGENT_SOCKET=sock,
                            MEMSCOPE_AGENT_REPLAY=os.path.join(SAMPLES, "release.pickle"), MEMSCOPE_AGENT_SPEED="0")
            proc = subprocess.Popen([sys.executable, script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            s = client.connect(sock, timeout=30)
            got = client.receive(s, timeout=60)
            out, err = proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, err)
            self.assertIn(b"trained", out)
            self.assertEqual(got.end["reason"], "replay_done")
            self.assertEqual(got.event_count, 39)
        finally:
            shutil.rmtree(d)

    def test_a_run_that_ends_before_its_recorder_attaches_waits_for_it(self):
        # Regression (CI, tst_live_job): `memscope record` attaches after the launch; a rank
        # that ended first left with its whole stream unsent and the recorder wrote no file.
        # MEMSCOPE_AGENT_RECORDER=1 (what record sets) makes the exit wait for the first client;
        # without it (no recorder) the program ends at once.
        d = tempfile.mkdtemp(prefix="msa-")
        script = os.path.join(d, "train.py")
        with open(script, "w") as f:
            f.write("import memscope_agent\nmemscope_agent.running().source.done.wait(60)\nprint('trained', flush=True)\n")
        try:
            for recorder in ("1", None):
                sock = os.path.join(d, "r%s.sock" % recorder)
                env = agent_env(MEMSCOPE_AGENT="1", MEMSCOPE_AGENT_SOCKET=sock, MEMSCOPE_AGENT_LINGER="30",
                                MEMSCOPE_AGENT_REPLAY=os.path.join(SAMPLES, "release.pickle"), MEMSCOPE_AGENT_SPEED="0")
                if recorder:
                    env["MEMSCOPE_AGENT_RECORDER"] = recorder
                proc = subprocess.Popen([sys.executable, script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                try:
                    self.assertEqual(proc.stdout.readline(), b"trained\n")
                    if not recorder:
                        self.assertEqual(proc.wait(10), 0)  # nobody to wait for
                        continue
                    time.sleep(1.0)
                    self.assertIsNone(proc.poll(), "the run ended before its recorder attached")
                    got = client.receive(client.connect(sock, timeout=30), timeout=60)
                    self.assertEqual(got.end["reason"], "replay_done")
                    self.assertEqual(got.event_count, 39)
                    self.assertEqual(proc.wait(30), 0)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                    proc.communicate()
        finally:
            shutil.rmtree(d)

    def test_environment_switch_without_torch_never_breaks_the_script(self):
        env = agent_env(MEMSCOPE_AGENT="1")
        env.pop("MEMSCOPE_AGENT_QUIET")
        r = subprocess.run([sys.executable, "-c", "print('still runs')"], env=env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0)
        self.assertIn("still runs", r.stdout)
        try:
            import torch  # noqa: F401
        except ImportError:
            self.assertIn("memscope-agent: not started", r.stderr)

    def test_list_shows_running_agents(self):
        tmp = tempfile.mkdtemp(prefix="msa-tmp-")
        env = agent_env(TMPDIR=tmp, XDG_RUNTIME_DIR="")
        proc = subprocess.Popen([sys.executable, "-m", "memscope_agent", "--replay",
                                 os.path.join(SAMPLES, "linear3.pickle")], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            directory = os.path.join(tmp, "memscope-%d" % os.getuid())
            deadline = time.monotonic() + 30
            info = os.path.join(directory, "agent-%d.json" % proc.pid)
            while not os.path.exists(info) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(stat.S_IMODE(os.stat(directory).st_mode), 0o700)
            with open(info) as f:
                self.assertEqual(json.load(f)["pid"], proc.pid)
            r = subprocess.run([sys.executable, "-m", "memscope_agent", "--list"], env=env, capture_output=True,
                               text=True, timeout=60)
            self.assertIn(str(proc.pid), r.stdout)
        finally:
            proc.kill()
            proc.communicate()
            shutil.rmtree(tmp)


class RecordingSettingsTest(unittest.TestCase):
    """What the agent asks of torch's recorder: the light mode's context, and torch's own
    copy of the trace (none with the tracker, all of it when polling reads it). A stand-in
    torch module records the call; polling is the source that needs no compiler."""

    def settings(self, mode="poll", **env):
        from memscope_agent import agent, markers

        calls = []
        fake = fake_torch()
        fake.cuda = types.SimpleNamespace(is_available=lambda: True, init=lambda: None,
                                          memory=types.SimpleNamespace(_record_memory_history=lambda **kw: calls.append(kw)))
        markers._installed = None
        saved_env = {k: os.environ.get(k) for k in env}
        saved_torch = sys.modules.get("torch")
        os.environ.update(env)
        sys.modules["torch"] = fake
        try:
            context = agent.recording_context()
            max_entries = int(os.environ["MEMSCOPE_AGENT_MAX_ENTRIES"]) if os.environ.get("MEMSCOPE_AGENT_MAX_ENTRIES") else None
            source = agent._make_source(mode, "python", max_entries, None, 1.0, 1.0, 18, context)
        finally:
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            if saved_torch is None:
                sys.modules.pop("torch", None)
            else:
                sys.modules["torch"] = saved_torch
        self.assertEqual(source.mode, mode)
        self.assertEqual(len(calls), 1)
        calls[0]["markers_installed"] = markers._installed is not None
        markers._installed = None
        return calls[0]

    def test_full_recording_by_default(self):
        kw = self.settings()
        self.assertEqual(kw["context"], "all")
        self.assertEqual(kw["stacks"], "python")
        self.assertEqual(kw["max_entries"], sys.maxsize)  # polling reads torch's copy

    def test_light_records_stacks_on_allocations_only(self):
        self.assertEqual(self.settings(MEMSCOPE_AGENT_LIGHT="1")["context"], "alloc")
        self.assertEqual(self.settings(MEMSCOPE_AGENT_CONTEXT="alloc")["context"], "alloc")
        self.assertEqual(self.settings(MEMSCOPE_AGENT_LIGHT="0")["context"], "all")

    def test_markers_record_no_stacks_and_install_the_markers(self):
        for env in ({"MEMSCOPE_AGENT_MARKERS": "1"}, {"MEMSCOPE_AGENT_CONTEXT": "none"},
                    {"MEMSCOPE_AGENT_MARKERS": "1", "MEMSCOPE_AGENT_LIGHT": "1"}):
            kw = self.settings(**env)
            self.assertIsNone(kw["context"], env)
            self.assertTrue(kw["markers_installed"], env)
        kw = self.settings(MEMSCOPE_AGENT_MARKERS="0")
        self.assertEqual(kw["context"], "all")
        self.assertFalse(kw["markers_installed"])

    def test_max_entries_as_asked(self):
        self.assertEqual(self.settings(MEMSCOPE_AGENT_MAX_ENTRIES="1000")["max_entries"], 1000)

    def test_unknown_context_refused(self):
        with self.assertRaisesRegex(ValueError, "context is 'all', 'alloc' or 'none'"):
            self.settings(MEMSCOPE_AGENT_CONTEXT="state")

    def test_light_flag_of_the_launcher(self):
        out = subprocess.run([sys.executable, "-m", "memscope_agent", "--help"], env=agent_env(), capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 0)
        self.assertIn("--light", out.stdout)
        self.assertIn("--markers", out.stdout)


def fake_torch():
    """A stand-in torch with what markers.py touches: nn.Module.__call__ / zero_grad,
    torch.autograd.backward / grad and record_function, which logs to fake.log."""
    fake = types.ModuleType("torch")
    fake.__version__ = "2.11.0"
    fake.log = []

    class Module:
        def __call__(self, *args, **kwargs):
            return self.forward(*args, **kwargs)

        def zero_grad(self):
            fake.log.append("zero_grad")

    class record_function:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            fake.log.append(self.name + " START")
            return self

        def __exit__(self, *exc):
            fake.log.append(self.name + " END")

    fake.nn = types.SimpleNamespace(Module=Module, modules=types.SimpleNamespace(module=None))
    fake.autograd = types.SimpleNamespace(backward=lambda *a, **k: fake.log.append("backward"),
                                          grad=lambda *a, **k: fake.log.append("grad"))
    fake.autograd.profiler = types.SimpleNamespace(record_function=record_function)
    return fake


class MarkersTest(unittest.TestCase):
    """markers.py: the outermost module call of the installing thread is one
    memscope.forward range (nested calls and other threads pass through, a raising forward
    still ends it), backward, grad and Module.zero_grad are ranges of their own."""

    def test_markers(self):
        from memscope_agent import markers

        fake = fake_torch()
        markers._installed = None
        try:
            self.assertEqual(markers.install(fake),
                             {"forward": "call", "backward": True, "grad": True, "zero_grad": True})
        finally:
            markers._installed = None

        class Inner(fake.nn.Module):
            def forward(self, x):
                fake.log.append("inner")
                return x

        class Outer(fake.nn.Module):
            def __init__(self):
                self.inner = Inner()

            def forward(self, x):
                return self.inner(self.inner(x))

        class Raising(fake.nn.Module):
            def forward(self, x):
                raise ValueError("x")

        model = Outer()
        model(1)
        fake.autograd.backward(1)
        fake.autograd.grad(1)
        model.zero_grad()
        t = threading.Thread(target=lambda: model(2))
        t.start()
        t.join()
        with self.assertRaises(ValueError):
            Raising()(1)
        model(3)
        F, B, Z = "memscope.forward", "memscope.backward", "memscope.zero_grad"
        self.assertEqual(fake.log, [F + " START", "inner", "inner", F + " END",
                                    B + " START", "backward", B + " END", B + " START", "grad", B + " END",
                                    Z + " START", "zero_grad", Z + " END",
                                    "inner", "inner",  # another thread: not marked
                                    F + " START", F + " END",  # the raising forward
                                    F + " START", "inner", "inner", F + " END"])


if __name__ == "__main__":
    unittest.main()
