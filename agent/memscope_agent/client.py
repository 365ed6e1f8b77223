"""A small protocol client (tests and the GPU validation use it; the app has its own in C++)."""

import json
import socket
import time

from . import protocol as P


def client_hello(token=None):
    payload = P.HELLO_HEAD.pack(P.MAGIC, P.VERSION_MAJOR, P.VERSION_MINOR) + json.dumps(
        {"client": "memscope_agent.client", "token": token}).encode()
    return P.message(P.CLIENT_HELLO, payload)


def connect(path=None, tcp=None, token=None, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        s = None
        try:
            if tcp:
                host, _, port = tcp.rpartition(":")
                s = socket.create_connection((host.strip("[]"), int(port)))
            else:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
            break
        except OSError:
            if s is not None:
                s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    s.sendall(client_hello(token))
    return s


def receive(sock, decoder=None, until_end=True, timeout=None, on_message=None):
    """Reads until END (or the connection closes); returns the decoder."""
    decoder = decoder or P.Decoder()
    sock.settimeout(timeout)
    while True:
        data = sock.recv(1 << 20)
        if not data:
            break
        for kind, payload in decoder.feed(data):
            if on_message:
                on_message(kind, payload, decoder)
        if until_end and decoder.end is not None:
            break
    return decoder
