"""The entry file's socket setting, then TCP_NODELAY of every connection the server holds, written
to $NODELAY_OUT as JSON (tests/deploy/test_nodelay.py)."""

import gc
import json
import os
import socket
from pathlib import Path

import streamlit as st

from dashboard import server

server.disable_nagle()
connections = []
for item in gc.get_objects():
    tcp = (socket.AF_INET, socket.AF_INET6)
    if issubclass(type(item), socket.socket) and item.family in tcp and item.fileno() != -1:
        try:
            item.getpeername()  # connected: a browser's socket, not the listening one
        except OSError:
            continue
        connections.append(item.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
out = Path(os.environ["NODELAY_OUT"])
out.with_suffix(".tmp").write_text(json.dumps(connections))
out.with_suffix(".tmp").replace(out)  # whole, never half written
st.write("probed")
