#!/usr/bin/python3
"""Ice 3.7 Python server of the fault tests (tests/faults.rs).

    /usr/bin/python3 slow_server.py <port> <incarnation>

Listens on tcp -h 127.0.0.1 -p <port> (0 picks a free port), serves
Faults::Slow as "slow", prints "READY <port>" once listening and
"CALL <operation>" when a dispatch starts. Incarnation 1 sleeps as asked;
later ones (a restarted server) answer at once."""
import os
import sys
import time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice(os.path.join(HERE, "Faults.ice"))
import Faults  # noqa: E402

INCARNATION = int(sys.argv[2])


class SlowI(Faults.Slow):
    def _sleep(self, op, ms):
        print("CALL " + op, flush=True)
        if INCARNATION == 1:
            time.sleep(ms / 1000.0)
        return INCARNATION

    def sleepMs(self, ms, current):
        return self._sleep("sleepMs", ms)

    def idemSleepMs(self, ms, current):
        return self._sleep("idemSleepMs", ms)


def main():
    props = Ice.createProperties()
    props.setProperty("Ice.ThreadPool.Server.Size", "4")
    props.setProperty("Ice.Warn.Connections", "0")
    data = Ice.InitializationData()
    data.properties = props
    with Ice.initialize(data) as communicator:
        adapter = communicator.createObjectAdapterWithEndpoints(
            "Slow", "tcp -h 127.0.0.1 -p " + sys.argv[1])
        adapter.add(SlowI(), Ice.stringToIdentity("slow"))
        adapter.activate()
        print("READY %d" % adapter.getEndpoints()[0].getInfo().port, flush=True)
        communicator.waitForShutdown()


main()
