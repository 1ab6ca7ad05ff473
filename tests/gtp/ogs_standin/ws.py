"""The server side of a WebSocket (RFC 6455) in the standard library, enough for one local client.

Text frames only, no extensions (the handshake accepts none, so the client compresses nothing),
pings answered, fragments joined. Binds to loopback only.
"""
from __future__ import annotations

import base64
import hashlib
import socket
import struct
import threading

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


class Closed(Exception):
    """The client closed the connection."""


def listen(port: int = 0) -> socket.socket:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(4)
    return srv


class Connection:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.rfile = sock.makefile("rb")
        self._send_lock = threading.Lock()
        self.path = self._handshake()

    def _handshake(self) -> str:
        request = self.rfile.readline().decode("latin-1").split()
        headers = {}
        while True:
            line = self.rfile.readline().decode("latin-1").strip()
            if not line:
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        key = headers.get("sec-websocket-key")
        if key is None:
            self.sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            raise Closed("not a WebSocket request")
        accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        self.sock.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n").encode())
        return request[1] if len(request) > 1 else "/"

    def _read(self, n: int) -> bytes:
        data = self.rfile.read(n)
        if len(data) < n:
            raise Closed("connection lost")
        return data

    def receive(self) -> str:
        """The next text message (pings are answered on the way)."""
        parts: list[bytes] = []
        while True:
            b1, b2 = self._read(2)
            opcode, length = b1 & 0x0F, b2 & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b2 & 0x80 else b"\0\0\0\0"
            payload = bytes(c ^ mask[i % 4] for i, c in enumerate(self._read(length)))
            if opcode == CLOSE:
                self._send(CLOSE, payload[:2])
                raise Closed("closed by the client")
            if opcode == PING:
                self._send(PONG, payload)
                continue
            if opcode == PONG:
                continue
            parts.append(payload)
            if b1 & 0x80:
                return b"".join(parts).decode("utf-8")

    def _send(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([n])
        elif n < 1 << 16:
            head += bytes([126]) + struct.pack(">H", n)
        else:
            head += bytes([127]) + struct.pack(">Q", n)
        with self._send_lock:
            self.sock.sendall(head + payload)

    def send(self, text: str) -> None:
        self._send(TEXT, text.encode("utf-8"))

    def close(self) -> None:
        try:
            self._send(CLOSE, struct.pack(">H", 1000))
        except OSError:
            pass
        self.sock.close()
