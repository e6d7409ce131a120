"""A publisher or subscriber of Ice 3.8 or Ice 3.7 for Python through a broker.

usage: ice38.py TM_PORT sub TOPIC COUNT    subscribes (twoway), prints READY,
                                           then, once COUNT events arrived (or
                                           after 60 s), one JSON line
       ice38.py TM_PORT pub TOPIC COUNT    publishes COUNT events (params: the
                                           publisher's Ice version and a
                                           sequence number), prints one JSON line

The topic is found with createOrRetrieve on Ice 3.8 (the operation Ice 3.8
added; created first if missing), with create/retrieve on Ice 3.7.
"""
import json
import sys
import threading
import time

import Ice
import IceStorm

ICE38 = Ice.intVersion() >= 30800


def encaps(payload):
    return (len(payload) + 6).to_bytes(4, "little") + bytes([1, 1]) + payload


class Recorder(Ice.Blobject):
    def __init__(self, log, cond):
        self.log, self.cond = log, cond

    def ice_invoke(self, in_params, current):
        with self.cond:
            self.log.append({"op": current.operation, "params": bytes(in_params).hex()})
            self.cond.notify_all()
        return (True, b"")


def topic_of(tm, name, out):
    if ICE38:
        topic = tm.createOrRetrieve(name)
        again = tm.createOrRetrieve(name)
        out["create_or_retrieve_same"] = topic.ice_getIdentity() == again.ice_getIdentity()
        try:
            tm.create(name)
            out["create_after"] = "no exception"
        except IceStorm.TopicExists:
            out["create_after"] = "TopicExists"
        return topic
    try:
        return tm.create(name)
    except IceStorm.TopicExists:
        return tm.retrieve(name)


def main():
    port, role, name, count = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    ic = Ice.initialize(["--Ice.Default.Host=127.0.0.1"])
    out = {"version": Ice.stringVersion()}
    try:
        tm = IceStorm.TopicManagerPrx.uncheckedCast(
            ic.stringToProxy("IceStorm/TopicManager:tcp -h 127.0.0.1 -p %d" % port))
        topic = topic_of(tm, name, out)
        if role == "sub":
            # One dispatch thread (the default): the order is observable.
            adapter = ic.createObjectAdapterWithEndpoints("Sub", "tcp -h 127.0.0.1 -p 0")
            cond = threading.Condition()
            log = []
            subscriber = adapter.addWithUUID(Recorder(log, cond))
            adapter.activate()
            topic.subscribeAndGetPublisher({"reliability": "ordered"}, subscriber)
            print("READY", flush=True)
            deadline = time.time() + 60
            with cond:
                while len(log) < count and time.time() < deadline:
                    cond.wait(1)
            out["received"] = log
            topic.unsubscribe(subscriber)
        else:
            publisher = topic.getPublisher().ice_twoway()
            major_minor = Ice.intVersion() // 100
            for seq in range(count):
                payload = major_minor.to_bytes(4, "little") + seq.to_bytes(4, "little")
                publisher.ice_invoke("event", Ice.OperationMode.Normal, encaps(payload))
            out["published"] = count
    finally:
        ic.destroy()
    print(json.dumps(out), flush=True)


main()
