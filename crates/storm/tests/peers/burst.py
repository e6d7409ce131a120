#!/usr/bin/python3
"""Real Ice 3.7 burst publisher / (slow) subscriber for a broker (floe-storm or IceStorm).

usage:
  burst.py pub TM_PORT TOPIC PUBLISHER_ID COUNT SIZE
      Sends COUNT oneway events of SIZE bytes (operation "ev"; params: an
      encapsulation holding PUBLISHER_ID and the sequence number 0..COUNT-1 as
      little-endian uint32, padded to SIZE bytes) to TOPIC's publisher, through
      this process's own communicator (its own connection), then destroys the
      communicator. Prints "sent count=COUNT seconds=S".

  burst.py sub TM_PORT TOPIC NAME EXPECTED DELAY_US [STALL_AFTER]
      Creates (or retrieves) TOPIC, subscribes a oneway servant with identity
      NAME (default QoS; one dispatch thread, so dispatch order is arrival
      order) and prints "ready". The servant sleeps DELAY_US microseconds per
      event (a slow, healthy subscriber). With STALL_AFTER, the servant blocks
      forever once it has seen that many events (prints "stalled"): its only
      dispatch thread is taken, so the process stops reading its connection.
      Ends when EXPECTED events came, or, once stdin is closed (the test's
      "publishers are done"), when no event came for SETTLE seconds (env
      BURST_SETTLE, default 3); with env BURST_TRACE set, Ice's protocol
      trace goes to stderr. Prints, per publisher,
      "publisher id=I count=N runs=A-B,C-D violations=P>Q,...": the runs of
      consecutive sequence numbers received and the order violations (a
      sequence number not greater than the previous one of the same
      publisher: reordering or duplicates); then
      "summary received=N seconds=S" (first to last event).
"""
import os
import struct
import sys
import threading
import time

import Ice
import IceStorm


def communicator(extra=None):
    props = Ice.createProperties()
    props.setProperty("Ice.Default.Host", "127.0.0.1")
    # No ACM closes in the middle of a long stall.
    props.setProperty("Ice.ACM.Close", "0")
    props.setProperty("Ice.ACM.Heartbeat", "0")
    for k, v in (extra or {}).items():
        props.setProperty(k, v)
    init = Ice.InitializationData()
    init.properties = props
    return Ice.initialize(init)


def topic_of(ic, port, name, create):
    tm = IceStorm.TopicManagerPrx.checkedCast(
        ic.stringToProxy("IceStorm/TopicManager:tcp -h 127.0.0.1 -p %d" % port))
    if create:
        try:
            return tm.create(name)
        except IceStorm.TopicExists:
            pass
    return tm.retrieve(name)


def publish(port, topic_name, pub_id, count, size):
    ic = communicator()
    try:
        topic = topic_of(ic, port, topic_name, False)
        prx = topic.getPublisher().ice_oneway()
        pad = b"\x00" * max(0, size - 8)
        head = 6 + 8 + len(pad)
        start = time.time()
        for seq in range(count):
            params = struct.pack("<IBBII", head, 1, 1, pub_id, seq) + pad
            prx.ice_invoke("ev", Ice.OperationMode.Normal, params)
        seconds = time.time() - start
    finally:
        # Graceful close: whatever is queued on the connection is written first.
        ic.destroy()
    print("sent count=%d seconds=%.3f" % (count, seconds), flush=True)


class Counter(Ice.Blobject):
    def __init__(self, delay, stall_after):
        self.delay = delay
        self.stall_after = stall_after
        self.cond = threading.Condition()
        self.seen = 0
        self.last_event = None
        self.first_event = None
        self.pubs = {}  # id -> [count, runs, violations, previous]
        self.gate = threading.Event()

    def ice_invoke(self, in_params, current):
        pub_id, seq = struct.unpack_from("<II", in_params, 6)
        with self.cond:
            now = time.time()
            if self.first_event is None:
                self.first_event = now
            self.last_event = now
            self.seen += 1
            p = self.pubs.setdefault(pub_id, [0, [], [], -1])
            p[0] += 1
            if seq <= p[3]:
                if len(p[2]) < 20:
                    p[2].append([p[3], seq])
            runs = p[1]
            if runs and runs[-1][1] + 1 == seq:
                runs[-1][1] = seq
            else:
                runs.append([seq, seq])
            p[3] = max(p[3], seq)
            self.cond.notify_all()
            stall = self.stall_after is not None and self.seen >= self.stall_after
        if stall:
            print("stalled", flush=True)
            self.gate.wait()  # forever: this subscriber stops reading
        elif self.delay > 0:
            time.sleep(self.delay)
        return (True, b"")


def subscribe(port, topic_name, name, expected, delay_us, stall_after):
    settle = float(os.environ.get("BURST_SETTLE", "3"))
    props = {"Sub.Endpoints": "tcp -h 127.0.0.1 -p 0",
             "Sub.ThreadPool.Size": "1", "Sub.ThreadPool.SizeMax": "1"}
    if os.environ.get("BURST_TRACE"):
        # Ice's protocol trace on stderr: one entry per message received,
        # a batch's with its number of requests.
        props["Ice.Trace.Protocol"] = "1"
    ic = communicator(props)
    servant = Counter(delay_us / 1e6, stall_after)
    try:
        topic = topic_of(ic, port, topic_name, True)
        adapter = ic.createObjectAdapter("Sub")
        prx = adapter.add(servant, Ice.stringToIdentity(name)).ice_oneway()
        adapter.activate()
        topic.subscribeAndGetPublisher({}, prx)
        print("ready", flush=True)

        done = threading.Event()

        def watch_stdin():
            sys.stdin.read()
            done.set()
            with servant.cond:
                servant.cond.notify_all()

        threading.Thread(target=watch_stdin, daemon=True).start()
        with servant.cond:
            done_at = None
            while servant.seen < expected:
                if done.is_set():
                    done_at = done_at or time.time()
                    quiet_since = max(done_at, servant.last_event or 0)
                    if time.time() - quiet_since >= settle:
                        break
                servant.cond.wait(0.2)
            lines = ["publisher id=%d count=%d runs=%s violations=%s" % (
                k, v[0], ",".join("%d-%d" % (a, b) for a, b in v[1]),
                ",".join("%d>%d" % (a, b) for a, b in v[2])) for k, v in sorted(servant.pubs.items())]
            lines.append("summary received=%d seconds=%.3f" % (
                servant.seen, (servant.last_event or 0) - (servant.first_event or 0)))
        print("\n".join(lines), flush=True)
    finally:
        servant.gate.set()
        ic.destroy()


def main():
    role = sys.argv[1]
    port = int(sys.argv[2])
    if role == "pub":
        publish(port, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    elif role == "sub":
        stall = int(sys.argv[7]) if len(sys.argv) > 7 else None
        subscribe(port, sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), stall)
    else:
        sys.exit("unknown role " + role)


if __name__ == "__main__":
    main()
