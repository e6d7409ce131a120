#!/usr/bin/python3
"""Real Ice 3.7 publisher and subscribers through a broker (floe-storm or IceStorm).

usage: pubsub.py TM_PORT SCENARIO
Prints one JSON object with what every subscriber received (operation,
mode, context, params encapsulation in hex) and what was published.
"""
import json
import sys
import threading
import time

import Ice
import IceStorm


class Recorder(Ice.Blobject):
    def __init__(self, name, log, cond):
        self.name, self.log, self.cond = name, log, cond

    def ice_invoke(self, in_params, current):
        with self.cond:
            self.log.append({"sub": self.name, "id": Ice.identityToString(current.id), "facet": current.facet,
                             "op": current.operation, "mode": int(current.mode.value), "ctx": dict(current.ctx),
                             "params": bytes(in_params).hex()})
            self.cond.notify_all()
        return (True, b"")


def encaps(payload, enc=(1, 1)):
    return (len(payload) + 6).to_bytes(4, "little") + bytes(enc) + payload


def main():
    port, scenario = int(sys.argv[1]), sys.argv[2]
    props = Ice.createProperties()
    props.setProperty("Ice.Default.Host", "127.0.0.1")
    props.setProperty("Sub.Endpoints", "tcp -h 127.0.0.1 -p 0:udp -h 127.0.0.1 -p 0")
    props.setProperty("Sub.ThreadPool.Size", "1")  # serialized dispatch: order is observable
    init = Ice.InitializationData()
    init.properties = props
    ic = Ice.initialize(init)
    out = {"received": [], "published": []}
    try:
        tm = IceStorm.TopicManagerPrx.uncheckedCast(
            ic.stringToProxy("IceStorm/TopicManager:tcp -h 127.0.0.1 -p %d" % port))
        try:
            topic = tm.create("demo")
        except IceStorm.TopicExists:
            topic = tm.retrieve("demo")
        adapter = ic.createObjectAdapter("Sub")
        cond = threading.Condition()
        log = out["received"]
        subs = {}
        kinds = {"twoway": lambda p: p.ice_twoway(), "oneway": lambda p: p.ice_oneway(),
                 "ordered": lambda p: p.ice_twoway(), "batch": lambda p: p.ice_batchOneway(),
                 "datagram": lambda p: p.ice_datagram()}
        names = {"basic": ["twoway", "oneway", "ordered", "batch", "datagram"]}.get(scenario, ["ordered"])
        for name in names:
            prx = kinds[name](adapter.add(Recorder(name, log, cond), Ice.stringToIdentity("sub-" + name)))
            qos = {"reliability": "ordered"} if name == "ordered" else {}
            subs[name] = topic.subscribeAndGetPublisher(qos, prx)
        adapter.activate()
        publisher = topic.getPublisher()
        events = []
        if scenario == "basic":
            twoway_pub = publisher.ice_twoway()
            oneway_pub = publisher.ice_oneway()
            events.append(("o", Ice.OperationMode.Normal, {"k": "v"}, encaps(b""), twoway_pub))
            events.append(("structs", Ice.OperationMode.Normal, {},
                           encaps(bytes.fromhex("0100000002000000026162000000000000e03f00")), oneway_pub))
            events.append(("anyop", Ice.OperationMode.Idempotent, {"a": "b", "c": "d"}, encaps(b"\x2a"), oneway_pub))
            events.append(("enums", Ice.OperationMode.Normal, {}, encaps(bytes.fromhex("022c0100"), (1, 0)),
                           oneway_pub))
            events.append(("ice_ping", Ice.OperationMode.Nonmutating, {}, encaps(b""), twoway_pub))
            events.append(("batched", Ice.OperationMode.Normal, {"via": "batch"}, encaps(b"\x07"),
                           publisher.ice_batchOneway()))
            big = bytes(range(256)) * 400
            # Too big for a datagram: the datagram subscriber fails on it.
            events.append(("big", Ice.OperationMode.Normal, {}, encaps(big), oneway_pub))
            for op, mode, ctx, params, prx in events:
                ok, reply = prx.ice_invoke(op, mode, params, ctx)
                if prx.ice_isBatchOneway():
                    prx.ice_flushBatchRequests()
                if prx.ice_isTwoway():
                    out.setdefault("twoway_replies", []).append(bytes(reply).hex())
                out["published"].append({"op": op, "mode": int(mode.value), "ctx": ctx, "params": params.hex()})
            # Per-subscriber publisher: only "twoway" gets it.
            subs["twoway"].ice_oneway().ice_invoke("only", Ice.OperationMode.Normal, encaps(b""))
            expected = len(events) * len(names) + 1 - 1  # no "big" by datagram
        elif scenario == "stall":
            # One subscriber blocks in its servant; the other must not notice.
            props2 = Ice.createProperties()
            props2.setProperty("Slow.Endpoints", "tcp -h 127.0.0.1 -p 0")
            props2.setProperty("Slow.ThreadPool.Size", "1")
            init2 = Ice.InitializationData()
            init2.properties = props2
            ic2 = Ice.initialize(init2)
            gate = threading.Event()
            stalled_log = []

            class Stalled(Ice.Blobject):
                def ice_invoke(self, in_params, current):
                    stalled_log.append(current.operation)
                    gate.wait(30)
                    return (True, b"")

            slow = ic2.createObjectAdapter("Slow")
            slow_prx = slow.add(Stalled(), Ice.stringToIdentity("stalled"))
            slow.activate()
            topic.subscribeAndGetPublisher({}, slow_prx)
            n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
            start = time.time()
            for k in range(n):
                publisher.ice_oneway().ice_invoke("e%d" % k, Ice.OperationMode.Normal, encaps(b""))
            with cond:
                while len(log) < n and time.time() < start + 20:
                    cond.wait(0.1)
            out["healthy_seconds"] = time.time() - start
            out["stalled_received"] = len(stalled_log)
            gate.set()
            expected = n
            time.sleep(0.2)
            ic2.destroy()
        else:
            # fan-in: 4 publishers (own communicators, own connections) x N events
            n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
            pubs = []
            for i in range(4):
                c = Ice.initialize()
                pubs.append((c, c.stringToProxy(str(publisher)).ice_oneway()))

            def run(i, prx):
                for k in range(n):
                    prx.ice_invoke("e", Ice.OperationMode.Normal, encaps(i.to_bytes(4, "little") + k.to_bytes(4, "little")))
                prx.ice_getConnection().flushBatchRequests(Ice.CompressBatch.No)

            threads = [threading.Thread(target=run, args=(i, p)) for i, (c, p) in enumerate(pubs)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            expected = 4 * n
        deadline = time.time() + 20
        with cond:
            while len(log) < expected and time.time() < deadline:
                cond.wait(0.2)
        time.sleep(0.3)
        out["expected"] = expected
        if scenario == "fanin":
            for c, _ in pubs:
                c.destroy()
        print(json.dumps(out))
    finally:
        ic.destroy()


if __name__ == "__main__":
    main()
