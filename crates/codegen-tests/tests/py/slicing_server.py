# The Ice <-> Ice reference for tests/slicing.rs: a Python Ice 3.7 server of
# Slicing.ice (with the server-only derived types). Usage:
# slicing_server.py <Slicing.ice>; prints "port N" and serves until stdin
# closes.
import sys
import threading

import Ice

Ice.loadSlice(sys.argv[1])
import Slicing  # noqa: E402


class Sliced(Slicing.SlicedServer):
    def derivedAsBase(self, current):
        return Slicing.Derived("base", "derived")

    def throwDerived(self, current):
        raise Slicing.DerivedError("derived", 7)


class Compact(Slicing.CompactServer):
    def derivedAsBase(self, current):
        return Slicing.Derived("base", "derived")

    def throwDerived(self, current):
        raise Slicing.DerivedError("derived", 7)

    def slicedDerivedAsBase(self, current):
        return Slicing.Derived("base", "derived")


def main():
    with Ice.initialize(sys.argv[:1]) as communicator:
        adapter = communicator.createObjectAdapterWithEndpoints("S", "tcp -h 127.0.0.1 -p 0")
        adapter.add(Sliced(), Ice.stringToIdentity("sliced"))
        adapter.add(Compact(), Ice.stringToIdentity("compact"))
        adapter.activate()
        port = adapter.getEndpoints()[0].getInfo().port
        print("port %d" % port, flush=True)
        done = threading.Event()

        def wait_stdin():
            sys.stdin.read()
            done.set()

        threading.Thread(target=wait_stdin, daemon=True).start()
        done.wait()


main()
