"""Real servers on 127.0.0.1 for the notification channels' tests (stdlib only).

``WebhookServer``: an HTTP server that records every POST and answers with the status
codes it is given, in order (then 200). ``SmtpServer``: a small ESMTP server that
speaks EHLO, STARTTLS (with a certificate made by ``self_signed_certificate``), AUTH
PLAIN, MAIL, RCPT, DATA and QUIT, and records every message it accepts. Each records
into a list guarded by a condition, so a test waits for a count with a timeout.
"""

from __future__ import annotations

import base64
import http.server
import socketserver
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class _Recorder:
    def __init__(self) -> None:
        self.items: list[Any] = []
        self._changed = threading.Condition()

    def add(self, item: Any) -> None:
        with self._changed:
            self.items.append(item)
            self._changed.notify_all()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Any]:
        with self._changed:
            self._changed.wait_for(lambda: len(self.items) >= count, timeout)
            return list(self.items)


@dataclass
class Posted:
    path: str
    headers: dict[str, str]
    body: bytes


class WebhookServer(_Recorder):
    def __init__(self, statuses: list[int] | None = None) -> None:
        super().__init__()
        self.statuses = list(statuses or [])
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                data = self.rfile.read(length)
                status = recorder.statuses.pop(0) if recorder.statuses else 200
                recorder.add(Posted(self.path, dict(self.headers.items()), data))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> WebhookServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key (made with openssl)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key


@dataclass
class Received:
    mail_from: str
    recipients: list[str]
    data: bytes
    tls: bool
    login: tuple[str, str] | None
    commands: list[str] = field(default_factory=list)


class SmtpServer(_Recorder):
    def __init__(
        self,
        certificate: tuple[Path, Path] | None = None,
        *,
        password: str = "",
    ) -> None:
        super().__init__()
        self.context: ssl.SSLContext | None = None
        if certificate is not None:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(str(certificate[0]), str(certificate[1]))
        self.password = password
        self.sessions: list[list[str]] = []
        recorder = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                opened: list[Any] = []
                try:
                    recorder._session(self, opened)
                finally:
                    for item in reversed(opened):  # the TLS files, then the TLS socket
                        item.close()

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def __enter__(self) -> SmtpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _session(self, handler: socketserver.StreamRequestHandler, opened: list[Any]) -> None:
        connection = handler.connection
        reader, writer = handler.rfile, handler.wfile
        commands: list[str] = []
        self.sessions.append(commands)
        tls = False
        login: tuple[str, str] | None = None
        mail_from, recipients = "", []

        def say(text: str) -> None:
            writer.write(text.encode() + b"\r\n")
            writer.flush()

        say("220 localhost ESMTP test")
        while True:
            line = reader.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            verb = text.split(" ", 1)[0].upper()
            commands.append(verb)
            if verb in ("EHLO", "HELO"):
                lines = ["localhost", "8BITMIME", "SMTPUTF8"]
                if self.context is not None and not tls:
                    lines.append("STARTTLS")
                if self.password and (tls or self.context is None):
                    lines.append("AUTH PLAIN")
                for item in lines[:-1]:
                    say(f"250-{item}")
                say(f"250 {lines[-1]}")
            elif verb == "STARTTLS" and self.context is not None and not tls:
                say("220 ready")
                connection = self.context.wrap_socket(connection, server_side=True)
                reader, writer = connection.makefile("rb"), connection.makefile("wb")
                opened += [connection, reader, writer]
                tls = True
            elif verb == "AUTH":
                parts = text.split()
                decoded = base64.b64decode(parts[2]).split(b"\0")
                user, password = decoded[1].decode(), decoded[2].decode()
                if password != self.password:
                    say("535 bad credentials")
                    continue
                login = (user, password)
                say("235 ok")
            elif verb == "MAIL":
                mail_from = text.split(":", 1)[1].split()[0].strip("<>")
                say("250 ok")
            elif verb == "RCPT":
                recipients.append(text.split(":", 1)[1].strip().strip("<>"))
                say("250 ok")
            elif verb == "DATA":
                say("354 go")
                data = bytearray()
                while (chunk := reader.readline()) not in (b".\r\n", b""):
                    data += chunk[1:] if chunk.startswith(b"..") else chunk
                self.add(Received(mail_from, recipients, bytes(data), tls, login, commands))
                mail_from, recipients = "", []
                say("250 queued")
            elif verb == "QUIT":
                say("221 bye")
                return
            else:
                say("250 ok" if verb in ("RSET", "NOOP") else "502 no")
