#!/usr/bin/python3
"""Federation check: publish on topic "fed" of one broker, receive through a
link on topic "fed" of another.

usage: fed.py PUBLISH_SIDE_TM_PROXY SUBSCRIBE_SIDE_TM_PROXY COUNT
Prints JSON: {"received": [{"op", "ctx", "params"}...]}.
"""
import json
import sys
import threading
import time

import Ice
import IceStorm


class Recorder(Ice.Blobject):
    def __init__(self, log, cond):
        self.log, self.cond = log, cond

    def ice_invoke(self, in_params, current):
        with self.cond:
            self.log.append({"op": current.operation, "ctx": dict(current.ctx), "params": bytes(in_params).hex()})
            self.cond.notify_all()
        return (True, b"")


def main():
    pub_tm, sub_tm, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    props = Ice.createProperties()
    props.setProperty("Sub.Endpoints", "tcp -h 127.0.0.1 -p 0")
    props.setProperty("Sub.ThreadPool.Size", "1")
    init = Ice.InitializationData()
    init.properties = props
    ic = Ice.initialize(init)
    try:
        a = IceStorm.TopicManagerPrx.uncheckedCast(ic.stringToProxy(pub_tm)).retrieve("fed")
        b = IceStorm.TopicManagerPrx.uncheckedCast(ic.stringToProxy(sub_tm)).retrieve("fed")
        adapter = ic.createObjectAdapter("Sub")
        log, cond = [], threading.Condition()
        prx = adapter.addWithUUID(Recorder(log, cond))
        b.subscribeAndGetPublisher({"reliability": "ordered"}, prx)
        adapter.activate()
        pub = a.getPublisher().ice_oneway()
        for i in range(count):
            cost = str(i % 3 * 4)  # 0, 4, 8: the link has cost 5, so 8 stays home
            payload = i.to_bytes(4, "little")
            pub.ice_invoke("ev%d" % i, Ice.OperationMode.Normal,
                           (len(payload) + 6).to_bytes(4, "little") + b"\x01\x01" + payload, {"cost": cost})
        want = len([i for i in range(count) if i % 3 != 2])
        deadline = time.time() + 20
        with cond:
            while len(log) < want and time.time() < deadline:
                cond.wait(0.2)
        time.sleep(0.5)
        print(json.dumps({"received": log, "expected": want}))
    finally:
        ic.destroy()


if __name__ == "__main__":
    main()
