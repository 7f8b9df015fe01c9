"""A real DNS server on 127.0.0.1 for custom-domain checks: it answers TXT questions from the
records a test publishes, built with dnspython's own message classes."""

from __future__ import annotations

import socket
import threading

import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset


class DnsServer:
    """Answers TXT questions over UDP: ``records`` name → values, ``failing`` names SERVFAIL,
    everything else NXDOMAIN. Names are written without the final dot."""

    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.failing: set[str] = set()
        self.questions: list[str] = []
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, name="dns-server", daemon=True)
        self._thread.start()

    def publish(self, name: str, *values: str) -> None:
        self.records[name] = list(values)

    def reset(self) -> None:
        self.records.clear()
        self.failing.clear()
        self.questions.clear()

    def close(self) -> None:
        self._socket.close()

    def _serve(self) -> None:
        while True:
            try:
                data, peer = self._socket.recvfrom(4096)
            except OSError:
                return
            self._socket.sendto(self._answer(dns.message.from_wire(data)).to_wire(), peer)

    def _answer(self, query: dns.message.Message) -> dns.message.Message:
        response = dns.message.make_response(query)
        question = query.question[0]
        name = question.name.to_text().rstrip(".").lower()
        self.questions.append(name)
        if name in self.failing:
            response.set_rcode(dns.rcode.SERVFAIL)
        elif name in self.records and question.rdtype == dns.rdatatype.TXT:
            values = [f'"{value}"' for value in self.records[name]]
            response.answer.append(dns.rrset.from_text_list(question.name, 60, "IN", "TXT", values))
        elif name not in self.records:
            response.set_rcode(dns.rcode.NXDOMAIN)
        return response
