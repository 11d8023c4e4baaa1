"""eigstream.client - the wire protocol v1 codec and client.

The module itself is eigstream_client (installed beside this package, and
tools/python/eigstream_client.py in the source tree, where the tests and tools
import it under that name); this re-exports it under the package:

    from eigstream import client
    parts = client.encode_covariance(seq, ts_ns, matrices)
"""
from eigstream_client import *  # noqa: F401,F403
from eigstream_client import ProtocolError, main  # noqa: F401
