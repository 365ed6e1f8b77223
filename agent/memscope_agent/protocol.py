"""The memscope live protocol, version 1 (docs/PROTOCOL.md is the reference).

A stream of messages, each ``u32 length`` (little-endian, bytes that follow) then
``u8 type`` then the payload. Strings, frames and stacks are defined once by a
definition message and referred to by id afterwards; events travel in fixed-size
records. This module holds the constants, an encoder (used by the replay and polling
sources; the C++ tracker has its own, in ``_tracker.cpp``) and a decoder (used by the
Python test client and the GPU validation).
"""

import json
import struct

MAGIC = b"MSCP"
VERSION_MAJOR = 1
VERSION_MINOR = 1  # 1.1: HELLO may carry job, rank, world_size, local_rank
MAX_MESSAGE = 16 << 20  # bytes after the length field, type byte included

HELLO, STRING, FRAME, STACK, EVENTS, ANNOTATION, SETTINGS, SEGMENTS, STATUS, END, TRUNCATED, ERROR = range(1, 13)
CLIENT_HELLO = 0x81

MESSAGE_NAMES = {
    HELLO: "HELLO", STRING: "STRING", FRAME: "FRAME", STACK: "STACK", EVENTS: "EVENTS",
    ANNOTATION: "ANNOTATION", SETTINGS: "SETTINGS", SEGMENTS: "SEGMENTS", STATUS: "STATUS",
    END: "END", TRUNCATED: "TRUNCATED", ERROR: "ERROR", CLIENT_HELLO: "CLIENT_HELLO",
}

ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "snapshot", "oom"]
ACTION_CODE = {name: i for i, name in enumerate(ACTIONS)}
ACTION_UNKNOWN = 255
OOM = ACTION_CODE["oom"]

BLOCK_STATES = ["active_allocated", "active_pending_free", "inactive"]
BLOCK_STATE_CODE = {name: i for i, name in enumerate(BLOCK_STATES)}
BLOCK_STATE_UNKNOWN = 3

HEADER = struct.Struct("<IB")
HELLO_HEAD = struct.Struct("<4sHH")
STRING_HEAD = struct.Struct("<I")
FRAME_DEF = struct.Struct("<IIIi")
STACK_HEAD = struct.Struct("<II")
EVENTS_HEAD = struct.Struct("<HHI")
# action, flags (bit 0: has time_us), reserved, stack, addr, size, stream, time_us,
# user_metadata, compile_context
EVENT = struct.Struct("<BBHIQQQqII")
ANNOTATION_REC = struct.Struct("<hBxIq")
SEGMENTS_HEAD = struct.Struct("<I")
# device, flags (bit 0: large pool, bit 1: expandable), stack, block count, address,
# total, allocated, active, requested, stream, pool id (2)
SEGMENT = struct.Struct("<iB3xIIQQQQQQqq")
BLOCK = struct.Struct("<QQQB3xI")
TRUNCATED_REC = struct.Struct("<Q")

EVENT_HAS_TIME = 1
SEGMENT_LARGE = 1
SEGMENT_EXPANDABLE = 2

MAX_EVENTS_PER_MESSAGE = 65536
# Ids defined by the Python encoder; the C++ tracker counts up from 1, so one stream
# can carry both without a clash.
PYTHON_ID_BASE = 0x80000000

U64 = (1 << 64) - 1


def message(kind, payload=b""):
    return HEADER.pack(len(payload) + 1, kind) + payload


def json_message(kind, obj):
    return message(kind, json.dumps(obj, separators=(",", ":"), default=str).encode())


def hello(info):
    return message(HELLO, HELLO_HEAD.pack(MAGIC, VERSION_MAJOR, VERSION_MINOR) + json.dumps(info, default=str).encode())


def _u64(v):
    return int(v) & U64


class Encoder:
    """Turns trace entries (dicts shaped like a snapshot's) into protocol messages.

    Definitions go to ``defs`` and events/annotations to ``body``, so a caller can send
    the definitions of a batch before the batch. ``take()`` returns and clears both.
    """

    def __init__(self, id_base=PYTHON_ID_BASE):
        self._strings = {"": 0}
        self._frames = {}
        self._stacks = {}
        self._next_string = id_base
        self._next_frame = id_base
        self._next_stack = id_base
        self._list_cache = {}
        self.defs = bytearray()
        self.body = bytearray()
        self.pending_events = 0
        self._device = None
        self._records = bytearray()
        self._count = 0

    # definitions
    def string(self, s):
        if s is None:
            return 0
        if not isinstance(s, str):
            s = str(s)
        sid = self._strings.get(s)
        if sid is None:
            sid = self._next_string
            self._next_string += 1
            self._strings[s] = sid
            self.defs += message(STRING, STRING_HEAD.pack(sid) + s.encode("utf-8", "surrogatepass"))
        return sid

    def frame(self, filename, name, line):
        key = (filename, name, line)
        fid = self._frames.get(key)
        if fid is None:
            fs, ns = self.string(filename), self.string(name)
            fid = self._next_frame
            self._next_frame += 1
            self._frames[key] = fid
            self.defs += message(FRAME, FRAME_DEF.pack(fid, fs, ns, int(line) if line is not None else 0))
        return fid

    def stack(self, frames):
        """Stack id of a list of frame dicts; 0 for none. Lists seen before (same object
        within one batch, see reset_object_cache) are looked up by identity."""
        if not frames:
            return 0
        cached = self._list_cache.get(id(frames))
        if cached is not None and cached[0] is frames:
            return cached[1]
        ids = tuple(self.frame(f.get("filename", ""), f.get("name", ""), f.get("line", 0)) for f in frames)
        sid = self._stacks.get(ids)
        if sid is None:
            sid = self._next_stack
            self._next_stack += 1
            self._stacks[ids] = sid
            self.defs += message(STACK, STACK_HEAD.pack(sid, len(ids)) + struct.pack("<%dI" % len(ids), *ids))
        self._list_cache[id(frames)] = (frames, sid)
        return sid

    def reset_object_cache(self):
        """Forget identity-keyed caches (call when the source objects may be freed)."""
        self._list_cache.clear()

    # events
    def event(self, device, entry):
        action = ACTION_CODE.get(entry.get("action"), ACTION_UNKNOWN)
        if self._device is not None and (device != self._device or self._count >= MAX_EVENTS_PER_MESSAGE):
            self._flush_events()
        self._device = device
        addr = entry.get("device_free", 0) if action == OOM else entry.get("addr", 0)
        flags = 0
        t = entry.get("time_us")
        if t is not None:
            flags |= EVENT_HAS_TIME
        else:
            t = 0
        self._records += EVENT.pack(action, flags, 0, self.stack(entry.get("frames")), _u64(addr or 0),
                                    _u64(entry.get("size", 0) or 0), _u64(entry.get("stream", 0) or 0), int(t),
                                    self.string(entry.get("user_metadata", "")),
                                    self.string(entry.get("compile_context", "")))
        self._count += 1
        self.pending_events += 1

    def annotation(self, a):
        self._flush_events()
        stage = 1 if a.get("stage") == "END" else 0
        rec = ANNOTATION_REC.pack(int(a.get("device", 0)), stage, self.string(a.get("name", "")), int(a.get("time_us", 0)))
        self.body += message(ANNOTATION, rec)

    def _flush_events(self):
        if self._count:
            self.body += message(EVENTS, EVENTS_HEAD.pack(self._device, 0, self._count) + bytes(self._records))
        self._records = bytearray()
        self._count = 0
        self._device = None

    def segments(self, segments):
        self._flush_events()
        out = bytearray(SEGMENTS_HEAD.pack(len(segments)))
        for s in segments:
            flags = (SEGMENT_LARGE if s.get("segment_type", "large") != "small" else 0) | \
                    (SEGMENT_EXPANDABLE if s.get("is_expandable") else 0)
            pool = tuple(s.get("segment_pool_id") or (0, 0)) + (0, 0)
            blocks = s.get("blocks") or []
            out += SEGMENT.pack(int(s.get("device", 0)), flags, self.stack(s.get("frames")), len(blocks),
                                _u64(s.get("address", 0)), _u64(s.get("total_size", 0)), _u64(s.get("allocated_size", 0)),
                                _u64(s.get("active_size", 0)), _u64(s.get("requested_size", 0)),
                                _u64(s.get("stream", 0)), int(pool[0]), int(pool[1]))
            cursor = s.get("address", 0)
            for b in blocks:
                address = b.get("address", cursor)
                size = b.get("size", 0)
                out += BLOCK.pack(_u64(address), _u64(size), _u64(b.get("requested_size", size)),
                                  BLOCK_STATE_CODE.get(b.get("state"), BLOCK_STATE_UNKNOWN), self.stack(b.get("frames")))
                cursor = address + size
        self.body += message(SEGMENTS, bytes(out))

    def settings(self, settings):
        self._flush_events()
        self.body += json_message(SETTINGS, settings or {})

    def take(self):
        """(definitions, body, event count) accumulated since the last take."""
        self._flush_events()
        defs, body, n = bytes(self.defs), bytes(self.body), self.pending_events
        self.defs = bytearray()
        self.body = bytearray()
        self.pending_events = 0
        return defs, body, n


class ProtocolError(Exception):
    pass


class Decoder:
    """Incremental decoder into snapshot-shaped dicts (the test client and the GPU
    validation use it). feed(bytes) -> list of (type, payload) after applying them."""

    def __init__(self, max_message=MAX_MESSAGE):
        self.max_message = max_message
        self.buf = bytearray()
        self.strings = {0: ""}
        self.frames = {}
        self.stacks = {0: []}
        self.devices = {}
        self.annotations = []
        self.settings = None
        self.segments = None
        self.hello = None
        self.status = None
        self.end = None
        self.truncated = 0
        self.errors = []
        self.event_count = 0

    def feed(self, data):
        self.buf += data
        out = []
        while len(self.buf) >= 4:
            length = struct.unpack_from("<I", self.buf)[0]
            if length == 0 or length > self.max_message:
                raise ProtocolError("message length %d outside 1..%d" % (length, self.max_message))
            if len(self.buf) < 4 + length:
                break
            kind = self.buf[4]
            payload = bytes(self.buf[5:4 + length])
            del self.buf[:4 + length]
            self._apply(kind, payload)
            out.append((kind, payload))
        return out

    def _str(self, sid):
        if sid not in self.strings:
            raise ProtocolError("string id %d used before it was defined" % sid)
        return self.strings[sid]

    def _stack(self, sid):
        if sid not in self.stacks:
            raise ProtocolError("stack id %d used before it was defined" % sid)
        return self.stacks[sid]

    def _apply(self, kind, p):
        if self.hello is None and kind != HELLO:
            raise ProtocolError("first message is type %d, expected HELLO" % kind)
        if kind == HELLO:
            magic, major, _minor = HELLO_HEAD.unpack_from(p)
            if magic != MAGIC or major != VERSION_MAJOR:
                raise ProtocolError("not a memscope agent or protocol %d" % major)
            self.hello = json.loads(p[HELLO_HEAD.size:] or b"{}")
        elif kind == STRING:
            (sid,) = STRING_HEAD.unpack_from(p)
            self.strings[sid] = p[4:].decode("utf-8", "surrogatepass")
        elif kind == FRAME:
            fid, fs, ns, line = FRAME_DEF.unpack_from(p)
            self.frames[fid] = {"filename": self._str(fs), "line": line, "name": self._str(ns)}
        elif kind == STACK:
            sid, n = STACK_HEAD.unpack_from(p)
            ids = struct.unpack_from("<%dI" % n, p, STACK_HEAD.size)
            self.stacks[sid] = [self.frames[i] for i in ids]
        elif kind == EVENTS:
            device, _flags, count = EVENTS_HEAD.unpack_from(p)
            if len(p) != EVENTS_HEAD.size + count * EVENT.size:
                raise ProtocolError("EVENTS payload size does not match its count")
            trace = self.devices.setdefault(device, [])
            for (action, flags, _r, stack, addr, size, stream, t, meta, ctx) in EVENT.iter_unpack(p[EVENTS_HEAD.size:]):
                e = {"action": ACTIONS[action] if action < len(ACTIONS) else "unknown"}
                e["device_free" if action == OOM else "addr"] = addr
                e["size"] = size
                e["stream"] = stream
                if flags & EVENT_HAS_TIME:
                    e["time_us"] = t
                e["frames"] = self._stack(stack)
                e["user_metadata"] = self._str(meta)
                e["compile_context"] = self._str(ctx)
                trace.append(e)
            self.event_count += count
        elif kind == ANNOTATION:
            device, stage, name, t = ANNOTATION_REC.unpack_from(p)
            self.annotations.append({"name": self._str(name), "stage": "END" if stage else "START", "device": device,
                                     "time_us": t})
        elif kind == SETTINGS:
            self.settings = json.loads(p)
        elif kind == SEGMENTS:
            (n,) = SEGMENTS_HEAD.unpack_from(p)
            at = SEGMENTS_HEAD.size
            segs = []
            for _ in range(n):
                (dev, flags, stack, nblocks, address, total, allocated, active, requested, stream, p0,
                 p1) = SEGMENT.unpack_from(p, at)
                at += SEGMENT.size
                blocks = []
                for _ in range(nblocks):
                    baddr, bsize, breq, state, bstack = BLOCK.unpack_from(p, at)
                    at += BLOCK.size
                    blocks.append({"address": baddr, "size": bsize, "requested_size": breq,
                                   "state": BLOCK_STATES[state] if state < 3 else "unknown",
                                   "frames": self._stack(bstack)})
                segs.append({"device": dev, "address": address, "total_size": total, "allocated_size": allocated,
                             "active_size": active, "requested_size": requested, "stream": stream,
                             "segment_type": "large" if flags & SEGMENT_LARGE else "small",
                             "segment_pool_id": (p0, p1), "is_expandable": bool(flags & SEGMENT_EXPANDABLE),
                             "frames": self._stack(stack), "blocks": blocks})
            self.segments = segs
        elif kind == STATUS:
            self.status = json.loads(p)
        elif kind == END:
            self.end = json.loads(p or b"{}")
        elif kind == TRUNCATED:
            self.truncated += TRUNCATED_REC.unpack_from(p)[0]
        elif kind == ERROR:
            self.errors.append(json.loads(p).get("message", ""))

    def snapshot(self):
        """The received data as a snapshot dict (the shape torch.cuda.memory._snapshot() has)."""
        ndev = max(self.devices) + 1 if self.devices else 1
        return {
            "segments": self.segments or [],
            "device_traces": [self.devices.get(d, []) for d in range(ndev)],
            "allocator_settings": self.settings or {},
            "external_annotations": self.annotations,
        }
