"""Starts the memscope agent in an unmodified script when MEMSCOPE_AGENT=1.

Python imports ``sitecustomize`` from sys.path at start-up; with this directory on
PYTHONPATH that is this file. It then hands over to the sitecustomize that would have
run otherwise (one later on sys.path), so a system's own customisation still runs.
"""

import os
import sys


def _chain():
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_memscope_chained_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception as e:
                sys.stderr.write("memscope-agent: %s failed: %s\n" % (candidate, e))
            return


def _start():
    if os.environ.get("MEMSCOPE_AGENT") != "1":
        return
    # Children of this process (DataLoader workers, subprocesses) start no agent of their own.
    del os.environ["MEMSCOPE_AGENT"]
    try:
        import memscope_agent

        memscope_agent.start()
    except Exception as e:  # never stop the user's program from running
        sys.stderr.write("memscope-agent: not started: %s: %s\n" % (type(e).__name__, e))


_chain()
_start()
