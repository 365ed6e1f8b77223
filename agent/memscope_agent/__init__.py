"""memscope live agent: streams a PyTorch program's CUDA allocator events to memscope.

    import memscope_agent; memscope_agent.start()      # in a script
    python -m memscope_agent train.py ARGS...          # launch under the agent
    MEMSCOPE_AGENT=1 PYTHONPATH=.../agent python train.py   # unmodified script
    python -m memscope_agent --replay FILE [--speed X] # serve a recorded snapshot (no torch)

docs/LIVE.md describes the options, docs/PROTOCOL.md the wire format.
"""

from .agent import __version__, running, start, stop

__all__ = ["start", "stop", "running", "__version__"]
