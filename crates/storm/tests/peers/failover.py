#!/usr/bin/python3
"""Real Ice 3.7 publishers and subscribers for replicated brokers (floe-storm
replicas or replicated IceStorm): what reaches whom while replicas die.

usage:
  failover.py sub TM_PROXY TOPIC NAME MODE
      Subscribes a servant with identity NAME to TOPIC (created if needed)
      through the topic manager proxy TM_PROXY (every replica's endpoints);
      MODE is oneway, twoway or ordered (twoway, reliability=ordered).
      Prints "ready", then, for each line "report" on stdin, what it
      received so far; at the end of stdin, a last report. A report is one
      line per publisher and a last one:
        publisher=ID count=C distinct=D highest=H missing=M ranges=a-b,c-d
            duplicates=P backwards=B
        report received=N
      (missing: sequence numbers up to the highest seen never received,
      with their ranges; backwards: events older than one received
      before).

  failover.py pub TM_PROXY TOPIC ID COUNT MODE INTERVAL_MS FIRST
      Publishes events 0..COUNT-1 (params: ID and the sequence number, two
      little-endian uint32) to TOPIC's replicated publisher, one every
      INTERVAL_MS, starting on replica FIRST (0-based index in the
      publisher's endpoints, tried in order). MODE twoway: an event whose
      call fails is sent again until a call succeeds; oneway: an event whose
      send raises is sent again. Prints one JSON line at the end:
        {"id": ID, "sent": COUNT, "retries": R, "outages": [{"seq": S,
         "at": T, "seconds": D, "error": E}, ...]}
      (an outage: from the first failed call to the next call that
      succeeded; T in seconds since the start; D is -1 for an outage it
      gave up on, after 30 s), as one line:
        published id=ID sent=COUNT gave_up=SEQ retries=R seconds=S outages=T:D:E,...
      (gave_up: the event it stopped at, -1 when it sent them all).

  With FAILOVER_LOCATOR set (an IceGrid locator), TM_PROXY may be a
  well-known proxy, and a publisher proxy naming a replica group is
  resolved to every replica's endpoints first, from the adapters listed in
  FAILOVER_PUBLISH_ADAPTERS (comma-separated, in replica order).
"""
import os
import struct
import sys
import threading
import time

import Ice
import IceStorm

# A publisher gives up after an outage this long (seconds).
GIVE_UP = 30


def communicator(extra=None):
    props = Ice.createProperties()
    props.setProperty("Ice.Default.Host", "127.0.0.1")
    props.setProperty("Ice.ACM.Close", "0")
    props.setProperty("Ice.ACM.Heartbeat", "0")
    # A replica that died is noticed at once (connection refused); one that
    # is stopped is given up on after 2 s.
    props.setProperty("Ice.Override.ConnectTimeout", "2000")
    if os.environ.get("FAILOVER_LOCATOR"):
        props.setProperty("Ice.Default.Locator", os.environ["FAILOVER_LOCATOR"])
    for k, v in (extra or {}).items():
        props.setProperty(k, v)
    init = Ice.InitializationData()
    init.properties = props
    return Ice.initialize(init)


def encaps(payload):
    return (len(payload) + 6).to_bytes(4, "little") + bytes([1, 1]) + payload


def topic_of(ic, tm_proxy, name, deadline):
    """The topic, created if needed; retried while replicas fail over."""
    tm = IceStorm.TopicManagerPrx.uncheckedCast(ic.stringToProxy(tm_proxy))
    while True:
        try:
            try:
                return tm.retrieve(name)
            except IceStorm.NoSuchTopic:
                try:
                    return tm.create(name)
                except IceStorm.TopicExists:
                    return tm.retrieve(name)
        except Ice.LocalException:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


class Recorder(Ice.Blobject):
    def __init__(self):
        self.lock = threading.Lock()
        self.received = 0
        self.pubs = {}  # id -> {"seen": set, "count": n, "last": seq, "backwards": n}

    def ice_invoke(self, in_params, current):
        pub_id, seq = struct.unpack_from("<II", in_params, 6)
        with self.lock:
            self.received += 1
            p = self.pubs.setdefault(pub_id, {"seen": set(), "count": 0, "last": -1, "backwards": 0})
            p["count"] += 1
            p["seen"].add(seq)
            if seq < p["last"]:
                p["backwards"] += 1
            p["last"] = max(p["last"], seq)
        return (True, b"")

    def report(self):
        with self.lock:
            lines = []
            for k, p in sorted(self.pubs.items()):
                seen = p["seen"]
                missing, start = [], None
                for s in range(max(seen) + 1 if seen else 0):
                    if s not in seen and start is None:
                        start = s
                    elif s in seen and start is not None:
                        missing.append((start, s - 1))
                        start = None
                lines.append("publisher=%d count=%d distinct=%d highest=%d missing=%d ranges=%s "
                             "duplicates=%d backwards=%d" % (
                                 k, p["count"], len(seen), p["last"], sum(b - a + 1 for a, b in missing),
                                 ",".join("%d-%d" % r for r in missing) or "-",
                                 p["count"] - len(seen), p["backwards"]))
            lines.append("report received=%d" % self.received)
            return "\n".join(lines)


def subscribe(tm_proxy, topic_name, name, mode):
    ic = communicator({"Sub.Endpoints": "tcp -h 127.0.0.1 -p 0",
                       "Sub.ThreadPool.Size": "1", "Sub.ThreadPool.SizeMax": "1"})
    try:
        topic = topic_of(ic, tm_proxy, topic_name, time.time() + 30)
        adapter = ic.createObjectAdapter("Sub")
        servant = Recorder()
        prx = adapter.add(servant, Ice.stringToIdentity(name))
        prx = prx.ice_oneway() if mode == "oneway" else prx.ice_twoway()
        adapter.activate()
        qos = {"reliability": "ordered"} if mode == "ordered" else {}
        deadline = time.time() + 30
        while True:
            try:
                topic.subscribeAndGetPublisher(qos, prx)
                break
            except IceStorm.AlreadySubscribed:
                break
            except Ice.LocalException:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        print("ready", flush=True)
        for line in sys.stdin:
            if line.strip() == "report":
                print(servant.report(), flush=True)
        print(servant.report(), flush=True)
    finally:
        ic.destroy()


def publish(tm_proxy, topic_name, pub_id, count, mode, interval_ms, first):
    ic = communicator()
    try:
        start = time.time()
        topic = topic_of(ic, tm_proxy, topic_name, start + 30)
        publisher = topic.getPublisher()
        endpoints = list(publisher.ice_getEndpoints())
        if not endpoints:
            # An indirect proxy (an IceGrid replica group): every replica's
            # endpoints, resolved through the registry replica by replica
            # (FAILOVER_PUBLISH_ADAPTERS, in replica order) so that FIRST
            # names a replica.
            locator = ic.getDefaultLocator()
            for adapter in os.environ["FAILOVER_PUBLISH_ADAPTERS"].split(","):
                endpoints += list(locator.findAdapterById(adapter).ice_getEndpoints())
            publisher = publisher.ice_adapterId("")
        first %= max(1, len(endpoints))
        publisher = publisher.ice_endpoints(endpoints[first:] + endpoints[:first]) \
            .ice_endpointSelection(Ice.EndpointSelectionType.Ordered)
        publisher = publisher.ice_oneway() if mode == "oneway" else publisher.ice_twoway()
        outages, retries, outage, gave_up = [], 0, None, -1
        next_at = time.time()
        for seq in range(count):
            params = encaps(struct.pack("<II", pub_id, seq))
            while True:
                try:
                    publisher.ice_invoke("event", Ice.OperationMode.Normal, params)
                    if outage is not None:
                        outage["seconds"] = round(time.time() - start - outage["at"], 3)
                        outages.append(outage)
                        outage = None
                    break
                except Ice.LocalException as e:
                    retries += 1
                    if outage is None:
                        outage = {"seq": seq, "at": round(time.time() - start, 3), "error": type(e).__name__}
                    elif time.time() - start - outage["at"] > GIVE_UP:
                        break
                    time.sleep(0.01)
            if outage is not None and time.time() - start - outage["at"] > GIVE_UP:
                gave_up = seq
                outage["seconds"] = -1
                outages.append(outage)
                break
            next_at += interval_ms / 1000.0
            pause = next_at - time.time()
            if pause > 0:
                time.sleep(pause)
        print("published id=%d sent=%d gave_up=%d retries=%d seconds=%.3f outages=%s" % (
            pub_id, count, gave_up, retries, time.time() - start,
            ",".join("%.3f:%.3f:%s" % (o["at"], o["seconds"], o["error"]) for o in outages) or "-"),
            flush=True)
    finally:
        ic.destroy()


def main():
    role = sys.argv[1]
    if role == "sub":
        subscribe(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif role == "pub":
        publish(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6],
                int(sys.argv[7]), int(sys.argv[8]))
    else:
        sys.exit("unknown role " + role)


if __name__ == "__main__":
    main()
