#!/usr/bin/env python3
"""Opens many event streams on the dashboard at once, from a process of its own.

Used by HostileRequestTests: the thousand clients live here, not in the test process, so their
descriptors cannot be confused with any other test's running in parallel there. Prints one JSON
line (served, refused, other heads), keeps every socket open until its stdin closes, then closes
them all and exits.

usage: many_streams.py PORT COUNT
"""
import json
import resource
import socket
import sys


def main():
    port, count = int(sys.argv[1]), int(sys.argv[2])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 100), hard))
    sockets = []
    for _ in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
        except OSError:
            break
        s.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sockets.append(s)
    served, refused, other = 0, 0, []
    for s in sockets:
        try:
            head = s.recv(512)
        except OSError as error:
            head = str(error).encode()
        if head.startswith(b"HTTP/1.1 200"):
            served += 1
        elif head.startswith(b"HTTP/1.1 503"):
            refused += 1
        else:
            other.append(head[:40].decode("utf-8", "replace"))
    print(json.dumps({"opened": len(sockets), "served": served, "refused": refused, "other": other}), flush=True)
    sys.stdin.read()
    for s in sockets:
        s.close()


if __name__ == "__main__":
    main()
