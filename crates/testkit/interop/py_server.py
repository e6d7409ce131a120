#!/usr/bin/python3
"""Ice 3.7 Python server of the floe interop suite.

    /usr/bin/python3 py_server.py <port> [--Ice.Prop=value ...]

Listens on tcp -h 127.0.0.1 -p <port> (0 picks a free port), or on
--Interop.Endpoints=... when given (e.g. ssl, with the IceSSL plugin and its
properties among the arguments), serves Interop::Test
as "test" (default facet and facet "facetA") and prints "READY <port>" once
listening. Exits on Test::shutdown() or when killed."""
import os
import sys
import threading
import time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice("", ["-I" + HERE, "--all", os.path.join(HERE, "ServerOnly.ice")])
import Interop  # noqa: E402


class State:
    """Counters shared by every facet of the servant."""

    def __init__(self):
        self.lock = threading.Lock()
        self.oneway_total = 0
        self.idem_calls = 0
        self.drop_calls = 0


class TestI(Interop.Test):
    def __init__(self, state):
        self.state = state

    def opPrims(self, b, y, s, i, l, f, d, st, current):
        return (st, b, y, s, i, l, f, d)

    def opByteSeq(self, v, current):
        return v

    def opSeqs(self, v, current):
        return v

    def opDicts(self, a, b, c, current):
        return (a, b, c)

    def opEnums(self, c, s, cs, current):
        return (c, s, cs)

    def opStructs(self, p, m, n, ps, ms, current):
        return (n, p, m, ps, ms)

    def opOptional(self, req, i, s, p, iseq, m, c, bb, current):
        return (i, s, p, iseq, m, c, bb)

    def opBase(self, b, current):
        return b

    def opGraph(self, n, current):
        return n

    def opPair(self, p, current):
        return p

    def opWithOpt(self, w, current):
        return w

    def getUnknownClass(self, current):
        return Interop.SecretDerived(7, "known", "hidden")

    def throwErr(self, which, current):
        if which == 1:
            raise Interop.BaseErr("base")
        if which == 2:
            raise Interop.DerivedErr("derived", 42)

    def throwSliced(self, which, current):
        if which == 1:
            raise Interop.DerivedErr("sliced", 43)
        if which == 2:
            raise Interop.SecretErr("secret", 44, "hidden")

    def throwUndeclared(self, current):
        raise Interop.BaseErr("undeclared")

    def throwNonIce(self, current):
        raise RuntimeError("python error")

    def opProxy(self, p, current):
        return p

    def onewayAdd(self, n, current):
        with self.state.lock:
            self.state.oneway_total += n

    def getOnewayTotal(self, current):
        with self.state.lock:
            return self.state.oneway_total

    def idemDropOnce(self, current):
        with self.state.lock:
            self.state.idem_calls += 1
            calls = self.state.idem_calls
        if calls == 1:
            current.con.close(Ice.ConnectionClose.Forcefully)
        return calls

    def dropOnce(self, current):
        with self.state.lock:
            self.state.drop_calls += 1
            calls = self.state.drop_calls
        if calls == 1:
            current.con.close(Ice.ConnectionClose.Forcefully)
        return calls

    def sleepMs(self, ms, current):
        time.sleep(ms / 1000.0)
        return ms

    def callCallback(self, name, a, b, current):
        cb = Interop.CallbackPrx.uncheckedCast(current.con.createProxy(Ice.Identity(name, "")))
        return cb.add(a, b)

    def getContext(self, current):
        return current.ctx

    def getFacet(self, current):
        return current.facet

    def reset(self, current):
        with self.state.lock:
            self.state.oneway_total = 0
            self.state.idem_calls = 0
            self.state.drop_calls = 0

    def shutdown(self, current):
        current.adapter.getCommunicator().shutdown()


def main():
    if len(sys.argv) < 2:
        print("usage: py_server.py <port> [--Ice.Prop=value ...]", file=sys.stderr)
        return 2
    port = int(sys.argv[1])
    props = Ice.createProperties(sys.argv[2:])
    props.parseCommandLineOptions("Interop", sys.argv[2:])
    if not props.getProperty("Interop.Endpoints"):
        props.setProperty("Interop.Endpoints", "tcp -h 127.0.0.1 -p %d" % port)
    props.setProperty("Ice.ThreadPool.Server.Size", "8")
    props.setProperty("Ice.ThreadPool.Server.SizeMax", "8")
    props.setProperty("Ice.Warn.Connections", "0")
    props.setProperty("Ice.Warn.Dispatch", "0")
    init = Ice.InitializationData()
    init.properties = props
    with Ice.initialize(init) as comm:
        adapter = comm.createObjectAdapter("Interop")
        state = State()
        ident = Ice.stringToIdentity("test")
        adapter.add(TestI(state), ident)
        adapter.addFacet(TestI(state), ident, "facetA")
        adapter.activate()
        info = adapter.getEndpoints()[0].getInfo()
        while not isinstance(info, Ice.IPEndpointInfo) and info.underlying:
            info = info.underlying  # ssl: the TCP endpoint under it
        actual = info.port
        print("READY %d" % actual, flush=True)
        comm.waitForShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
