"""python -m memscope_agent [options] (SCRIPT ARGS... | -m MODULE ARGS... | --replay FILE | --list)

Installed with pip (agent/pyproject.toml) this is also the `memscope-agent` command."""

import argparse
import json
import os
import runpy
import signal
import sys


def _parser():
    from .agent import __version__

    prog = "memscope-agent" if os.path.basename(sys.argv[0]) == "memscope-agent" else "python -m memscope_agent"
    p = argparse.ArgumentParser(
        prog=prog,
        description="Stream a PyTorch program's CUDA memory events to memscope (docs/LIVE.md).")
    p.add_argument("--socket", help="Unix socket path (default: a private per-user directory)")
    p.add_argument("--tcp", metavar="[HOST:]PORT", help="also listen on TCP, loopback only (prints a token)")
    p.add_argument("--mode", choices=["auto", "tracker", "poll"], default=None,
                   help="tracker: C++ extension (default when it builds); poll: torch.cuda.memory._snapshot()")
    p.add_argument("--stacks", choices=["python", "all"], default=None, help="stack frames to record (default python)")
    p.add_argument("--max-entries", type=int, default=None, help="torch's own trace ring buffer size")
    p.add_argument("--markers", action="store_true",
                   help="no stacks at all (torch's context=None), phase markers from module, autograd and "
                        "optimizer hooks instead: the cheapest mode; categories from the markers")
    p.add_argument("--light", action="store_true",
                   help="stacks on allocations only (torch's context='alloc'): cheaper; frees carry no stack")
    p.add_argument("--replay", metavar="FILE", help="serve a recorded snapshot's events instead (no torch needed)")
    p.add_argument("--speed", type=float, default=1.0, help="replay pace: 1 = as recorded, 0 = as fast as possible")
    p.add_argument("--max-gap", type=float, default=1.0, help="replay: longest pause between events, seconds")
    p.add_argument("--rate", type=float, default=None, metavar="EVENTS_PER_S",
                   help="replay at a fixed event rate (0 = as fast as possible) instead of the recorded pace; "
                        "runs the native sender `memscope replay-serve` when a memscope binary is found "
                        "(MEMSCOPE_BIN, PATH, or this checkout's build folders), else paces in Python")
    p.add_argument("--no-wait", action="store_true", help="replay: start at once, not when the first client has said hello")
    p.add_argument("--linger", type=float, default=None, help="seconds to let clients finish reading at the end")
    p.add_argument("--list", action="store_true", help="list the agents running for this user")
    p.add_argument("--version", action="version", version="memscope-agent " + __version__)
    p.add_argument("-m", dest="module", help="run a module as __main__")
    p.add_argument("target", nargs=argparse.REMAINDER, help="script and its arguments")
    return p


def _list():
    from .transport import default_directory

    d = default_directory()
    found = 0
    if os.path.isdir(d):
        for name in sorted(os.listdir(d)):
            if name.endswith(".json"):
                try:
                    with open(os.path.join(d, name)) as f:
                        info = json.load(f)
                    os.kill(int(info["pid"]), 0)
                except (OSError, ValueError, KeyError):
                    continue
                found += 1
                job = ("job %s rank %s/%s\t" % (info["job"], info.get("rank"), info.get("world_size", "?"))
                       if info.get("job") else "")
                argv = " ".join(info.get("argv", []))
                print("%d\t%s\t%s%s\t%s" % (info["pid"], info.get("mode"), job, info.get("socket"), argv))
    if not found:
        print("no agents running (looked in %s)" % d)
    return 0


def _native_memscope():
    """The memscope binary that has `replay-serve`, or None."""
    import shutil
    candidates = [os.environ.get("MEMSCOPE_BIN"), shutil.which("memscope")]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for build in ("build/dev", "build/cli", "build/default", "build"):
        candidates.append(os.path.join(root, build, "app", "memscope"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def _exec_native_replay(args):
    """memscope-agent --replay FILE --rate N: becomes `memscope replay-serve` (same pid, so the
    socket keeps the agent's name agent-PID.sock). Returns only when that is not possible."""
    if args.tcp or os.environ.get("MEMSCOPE_AGENT_NATIVE_REPLAY") == "0":
        return
    exe = _native_memscope()
    if not exe:
        return
    from . import transport
    socket_path = args.socket
    if not socket_path:
        d = transport.default_directory()
        transport.check_private_directory(d)
        socket_path = os.path.join(d, "agent-%d.sock" % os.getpid())
    info = os.path.splitext(socket_path)[0] + ".json"
    print("memscope-agent: native replay sender %s, socket %s" % (exe, socket_path), file=sys.stderr, flush=True)
    os.execv(exe, [exe, "replay-serve", args.replay, "--socket", socket_path, "--rate", repr(float(args.rate)),
                   "--info", info])


_script_globals = None  # the script's globals live until exit: its tensors are not freed before the agent's end


def main(argv=None):
    global _script_globals
    args = _parser().parse_args(argv)
    if args.list:
        return _list()
    if args.linger is not None:
        os.environ["MEMSCOPE_AGENT_LINGER"] = str(args.linger)
    from . import agent

    if args.replay and args.rate is not None:
        _exec_native_replay(args)
    if args.replay:
        a = agent.start(socket_path=args.socket, tcp=args.tcp, replay=args.replay, speed=args.speed,
                        max_gap=args.max_gap, wait_client=not args.no_wait, rate=args.rate)
        if a.server.token:
            print("memscope-agent: tcp %s token %s" % (a.server.tcp_address, a.server.token), flush=True)
        if not args.no_wait:
            a.server.wait_for_client()
            a.source.go.set()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            while not a.source.done.wait(0.2):
                pass
        except KeyboardInterrupt:
            pass
        agent.stop()
        return 0

    target = args.target
    if target and target[0] == "--":
        target = target[1:]
    if not args.module and not target:
        _parser().error("give a script to run, -m MODULE, --replay FILE or --list")
    os.environ.pop("MEMSCOPE_AGENT", None)
    a = agent.start(socket_path=args.socket, tcp=args.tcp, mode=args.mode, stacks=args.stacks,
                    max_entries=args.max_entries, context="none" if args.markers else "alloc" if args.light else None)
    if a.server.token:
        print("memscope-agent: tcp %s token %s" % (a.server.tcp_address, a.server.token), flush=True)
    if args.module:
        sys.argv = [args.module] + target
        _script_globals = runpy.run_module(args.module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(target)
        sys.path.insert(0, os.path.dirname(os.path.abspath(target[0])))
        _script_globals = runpy.run_path(target[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
