#!/usr/bin/python3
"""Subscriber failure handling: which subscribers survive rounds of events.

usage: failures.py TM_PORT DISCARD_INTERVAL_SECONDS
Subscribers (all on topic "failures"):
  gone   twoway to a live adapter without that object (ObjectNotExist), retryCount -1
  r0     twoway to a dead endpoint, retryCount 0
  r2     twoway to a dead endpoint, retryCount 2
  rinf   twoway to a dead endpoint, retryCount -1
  ord1   ordered twoway to a dead endpoint, retryCount 1
  live   twoway to a live object (counts its events)
Each round publishes one event, waits, and lists getSubscribers.
Prints JSON: {"rounds": [[ids...], ...], "live": n}.
"""
import json
import socket
import sys
import threading
import time

import Ice
import IceStorm


class Counter(Ice.Blobject):
    def __init__(self):
        self.n = 0
        self.lock = threading.Lock()

    def ice_invoke(self, in_params, current):
        with self.lock:
            self.n += 1
        return (True, b"")


def main():
    port, discard = int(sys.argv[1]), float(sys.argv[2])
    props = Ice.createProperties()
    props.setProperty("Live.Endpoints", "tcp -h 127.0.0.1 -p 0")
    init = Ice.InitializationData()
    init.properties = props
    ic = Ice.initialize(init)
    try:
        tm = IceStorm.TopicManagerPrx.uncheckedCast(
            ic.stringToProxy("IceStorm/TopicManager:tcp -h 127.0.0.1 -p %d" % port))
        topic = tm.create("failures")
        adapter = ic.createObjectAdapter("Live")
        counter = Counter()
        live = adapter.add(counter, Ice.stringToIdentity("live"))
        adapter.activate()
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
        s.close()  # nothing listens there now
        dead = lambda name: ic.stringToProxy("%s:tcp -h 127.0.0.1 -p %d" % (name, dead_port))
        subs = [
            ("gone", live.ice_identity(Ice.stringToIdentity("gone")), {"retryCount": "-1"}),
            ("r0", dead("r0"), {}),
            ("r2", dead("r2"), {"retryCount": "2"}),
            ("rinf", dead("rinf"), {"retryCount": "-1"}),
            ("ord1", dead("ord1"), {"retryCount": "1", "reliability": "ordered"}),
            ("live", live, {}),
        ]
        for _, prx, qos in subs:
            topic.subscribeAndGetPublisher(qos, prx)
        pub = topic.getPublisher().ice_oneway()
        rounds = []
        for r in range(4):
            pub.ice_invoke("round%d" % r, Ice.OperationMode.Normal, b"\x06\x00\x00\x00\x01\x01")
            time.sleep(0.6)
            rounds.append([Ice.identityToString(i) for i in topic.getSubscribers()])
            time.sleep(discard + 0.2)
        print(json.dumps({"rounds": rounds, "live": counter.n}))
    finally:
        ic.destroy()


if __name__ == "__main__":
    main()
