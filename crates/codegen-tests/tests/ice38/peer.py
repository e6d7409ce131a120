# An Ice peer of the Ice 3.8 interop tests (tests/ice38.rs), for Ice 3.7
# and Ice 3.8 for Python alike.
#
#   peer.py server [--Ice.X=v ...]
#       serves Ice38::Peer as "peer"; prints "READY <port>", runs until
#       stdin closes
#   peer.py statuses <proxy> [--Ice.X=v ...]
#       reply statuses above 7: prints "PASS name" / "FAIL name: detail"
#   peer.py idle <proxy> <seconds> [--Ice.X=v ...]
#       calls whoami, stays idle, calls whoami again; prints "IDLE same" or
#       "IDLE changed", and "CLOSED <seconds>" if the connection closed
import os
import sys
import threading
import time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
SLICE = os.path.join(HERE, "..", "..", "slice", "Ice38.ice")
# Ice 3.8 takes a list of arguments, Ice 3.7 a string.
Ice.loadSlice([SLICE] if Ice.intVersion() >= 30800 else SLICE)
import Interop38  # noqa: E402

ICE38 = Ice.intVersion() >= 30800


class PeerI(Interop38.Peer):
    def fail(self, status, message, current):
        if ICE38:
            raise Ice.DispatchException(status, message)
        raise Ice.UnknownException(message)

    def slow(self, ms, current):
        time.sleep(ms / 1000.0)
        return ms

    def whoami(self, current):
        info = current.con.getInfo()
        while info is not None and not hasattr(info, "remoteAddress"):
            info = getattr(info, "underlying", None)
        return "%s:%d" % (info.remoteAddress, info.remotePort)


def server(args):
    props = ["--Ice.ThreadPool.Server.Size=4", "--Ice.ThreadPool.Server.SizeMax=4"]
    communicator = Ice.initialize(props + args)
    adapter = communicator.createObjectAdapterWithEndpoints("Peer", "tcp -h 127.0.0.1 -p 0")
    adapter.add(PeerI(), Ice.stringToIdentity("peer"))
    adapter.activate()
    port = adapter.getEndpoints()[0].getInfo().port
    print("READY %d" % port, flush=True)
    sys.stdin.read()
    communicator.destroy()


def report(name, failure):
    if failure is None:
        print("PASS %s" % name, flush=True)
    else:
        print("FAIL %s: %s" % (name, failure), flush=True)


def statuses(proxy_text, args):
    communicator = Ice.initialize(args)
    try:
        peer = Interop38.PeerPrx.uncheckedCast(communicator.stringToProxy(proxy_text))
        before = peer.whoami()
        for status, message in [(8, "invalid data"), (9, "no token"), (200, "custom")]:
            name = "status_%d" % status
            # A call in flight on the same connection must not be hurt.
            pending = peer.slowAsync(300)
            try:
                peer.fail(status, message)
                report(name, "no exception")
            except Ice.LocalException as ex:
                got = type(ex).__name__
                if ICE38:
                    if got != "DispatchException" or ex.replyStatus != status:
                        report(name, "raised %s %s" % (got, ex))
                    elif message not in str(ex):
                        report(name, "message %r not in %r" % (message, str(ex)))
                    else:
                        report(name, None)
                elif got != "UnknownReplyStatusException":
                    report(name, "raised %s %s" % (got, ex))
                else:
                    report(name, None)
            try:
                if pending.result() != 300:
                    report(name + "_in_flight", "wrong result")
                else:
                    report(name + "_in_flight", None)
            except Exception as ex:
                report(name + "_in_flight", "the call in flight failed: %r" % ex)
        after = peer.whoami()
        report("same_connection", None if before == after else "%s then %s" % (before, after))
    finally:
        communicator.destroy()
    print("SUMMARY", flush=True)


def idle(proxy_text, seconds, args):
    communicator = Ice.initialize(args)
    try:
        peer = Interop38.PeerPrx.uncheckedCast(communicator.stringToProxy(proxy_text))
        before = peer.whoami()
        start = time.time()
        closed = []
        connection = peer.ice_getConnection()
        connection.setCloseCallback(lambda c: closed.append(time.time() - start))
        time.sleep(seconds)
        after = peer.whoami()
        print("IDLE %s" % ("same" if before == after else "changed"), flush=True)
        if closed:
            print("CLOSED %.1f" % closed[0], flush=True)
    finally:
        communicator.destroy()


def main():
    mode = sys.argv[1]
    if mode == "server":
        server(sys.argv[2:])
    elif mode == "statuses":
        statuses(sys.argv[2], sys.argv[3:])
    elif mode == "idle":
        idle(sys.argv[2], float(sys.argv[3]), sys.argv[4:])
    else:
        sys.exit("unknown mode %s" % mode)


main()
