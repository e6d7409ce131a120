#!/usr/bin/python3
"""Real Ice 3.7 twoway publisher and ordered subscriber for a broker restart test.

usage:
  restart.py pub TM_PORT TOPIC COUNT
      Publishes events 0..COUNT-1 twoway (operation "ev"; params: the
      sequence number as a little-endian uint32), one at a time, each after
      the previous one was acknowledged (the twoway reply). A failed publish
      (the broker is restarting) is retried with the same sequence number,
      after fetching the topic's publisher again, until it is acknowledged;
      such a number is "retried": the broker may or may not have taken the
      failed attempt. Prints "acked N" every 1000 events and, at the end,
      "done acked=COUNT retried=S,T,...".

  restart.py sub TM_PORT TOPIC NAME COUNT DELAY_US
      Subscribes a twoway servant with identity NAME and QoS
      reliability=ordered, prints "ready", and records the sequence numbers
      in arrival order, sleeping DELAY_US microseconds per event (slower
      than the publisher, so that events wait in the broker's queue). Ends when it has seen every number 0..COUNT-1, or
      when stdin is closed and nothing came for 3 s. Prints
      "received total=N distinct=D missing=A,B,... repeats=P,Q,...
      backwards=X>Y,..." (missing: never received; repeats: received more
      than once; backwards: a number below the previous one).
"""
import struct
import sys
import threading
import time

import Ice
import IceStorm


def communicator(extra=None):
    props = Ice.createProperties()
    props.setProperty("Ice.Default.Host", "127.0.0.1")
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


def publisher(ic, port, topic_name):
    """The topic's twoway publisher, waiting for the broker to be back."""
    deadline = time.time() + 60
    while True:
        try:
            return topic_of(ic, port, topic_name, False).getPublisher().ice_twoway()
        except Ice.LocalException:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def publish(port, topic_name, count):
    ic = communicator()
    retried = []
    try:
        prx = publisher(ic, port, topic_name)
        for seq in range(count):
            params = struct.pack("<IBBI", 10, 1, 1, seq)
            while True:
                try:
                    prx.ice_invoke("ev", Ice.OperationMode.Normal, params)
                    break
                except Ice.LocalException:
                    if not retried or retried[-1] != seq:
                        retried.append(seq)
                    time.sleep(0.05)
                    prx = publisher(ic, port, topic_name)
            if (seq + 1) % 1000 == 0:
                print("acked %d" % (seq + 1), flush=True)
    finally:
        ic.destroy()
    print("done acked=%d retried=%s" % (count, ",".join(str(s) for s in retried)), flush=True)


class Recorder(Ice.Blobject):
    def __init__(self, delay):
        self.delay = delay
        self.cond = threading.Condition()
        self.seqs = []
        self.last = None

    def ice_invoke(self, in_params, current):
        (seq,) = struct.unpack_from("<I", in_params, 6)
        with self.cond:
            self.seqs.append(seq)
            self.last = time.time()
            self.cond.notify_all()
        if self.delay > 0:
            time.sleep(self.delay)
        return (True, b"")


def subscribe(port, topic_name, name, count, delay_us):
    ic = communicator({"Sub.Endpoints": "tcp -h 127.0.0.1 -p 0",
                       "Sub.ThreadPool.Size": "1", "Sub.ThreadPool.SizeMax": "1"})
    servant = Recorder(delay_us / 1e6)
    try:
        topic = topic_of(ic, port, topic_name, True)
        adapter = ic.createObjectAdapter("Sub")
        prx = adapter.add(servant, Ice.stringToIdentity(name)).ice_twoway()
        adapter.activate()
        topic.subscribeAndGetPublisher({"reliability": "ordered"}, prx)
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
            while len(set(servant.seqs)) < count:
                if done.is_set():
                    done_at = done_at or time.time()
                    if time.time() - max(done_at, servant.last or 0) >= 3:
                        break
                servant.cond.wait(0.2)
            seqs = list(servant.seqs)
        seen = set()
        repeats = []
        backwards = []
        for i, s in enumerate(seqs):
            if s in seen:
                repeats.append(s)
            seen.add(s)
            if i > 0 and s < seqs[i - 1]:
                backwards.append("%d>%d" % (seqs[i - 1], s))
        missing = [s for s in range(count) if s not in seen]
        print("received total=%d distinct=%d missing=%s repeats=%s backwards=%s" % (
            len(seqs), len(seen), ",".join(map(str, missing[:50])),
            ",".join(map(str, repeats[:50])), ",".join(backwards[:50])), flush=True)
    finally:
        ic.destroy()


def main():
    role = sys.argv[1]
    port = int(sys.argv[2])
    if role == "pub":
        publish(port, sys.argv[3], int(sys.argv[4]))
    elif role == "sub":
        subscribe(port, sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        sys.exit("unknown role " + role)


if __name__ == "__main__":
    main()
