#!/usr/bin/python3
"""One ice_ping through Ice for Python, for the ssl failure tests.

    /usr/bin/python3 py_tls_probe.py <proxy> [--Ice.Prop=value ...]

Prints "OK" when the ping succeeds, else "ERROR <exception type>: <text>"
(on one line), and exits 0 either way."""
import sys

import Ice


def main():
    if len(sys.argv) < 2:
        print("usage: py_tls_probe.py <proxy> [--Ice.Prop=value ...]", file=sys.stderr)
        return 2
    init = Ice.InitializationData()
    init.properties = Ice.createProperties(sys.argv[2:])
    init.properties.setProperty("Ice.Warn.Connections", "0")
    with Ice.initialize(init) as comm:
        try:
            comm.stringToProxy(sys.argv[1]).ice_ping()
            print("OK", flush=True)
        except Exception as e:  # noqa: BLE001
            text = str(e).replace("\n", " | ")
            print("ERROR %s: %s" % (type(e).__name__, text), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
