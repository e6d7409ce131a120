#!/usr/bin/python3
"""Ice 3.7 Python reference peers of floe's IceGrid test (tests/grid.rs).

    grid_peer.py server [LOCATOR ADAPTER_ID REPLICA_GROUP] [--Ice.Prop=value ...]
        Serves Bench::Latency as "a" on the object adapter BenchAdapter
        (tcp -h 127.0.0.1, a free port), registered as ADAPTER_ID in
        REPLICA_GROUP ("-" for none); prints "READY <port>"; on SIGTERM
        unregisters (adapter deactivation) and exits 0. Without the
        positional arguments (an IceGrid node starts it with
        --Ice.Config=FILE), everything comes from the configuration.

    grid_peer.py client LOCATOR PROXY COUNT [--Ice.Prop=value ...]
        COUNT times, with a new communicator each time, calls o() on PROXY;
        prints "ok <port> <port> ..." (the servers' ports) or
        "error <exception type id>".

    grid_peer.py glacier2 ROUTER PROXY [--Ice.Prop=value ...]
        Creates a Glacier2 session on ROUTER, calls o() on PROXY through
        it, destroys the session; prints "ok" or "error <type id>".

    grid_peer.py glacier2-callback ROUTER [--Ice.Prop=value ...]
        Creates a Glacier2 session on ROUTER and an object adapter with the
        router, serves Bench::Latency as "<client category>/cb", prints
        "PROXY <its proxy>", waits (up to 20 s) for o() and prints
        "called".

    grid_peer.py glacier2-secure ROUTER PROXY [--IceSSL.Prop=value ...]
    grid_peer.py glacier2-callback-secure ROUTER [--IceSSL.Prop=value ...]
        The same with createSessionFromSecureConnection (an ssl ROUTER;
        the IceSSL properties give the client's certificate).

    grid_peer.py failover LOCATOR PROXY GO_FILE [--Ice.Prop=value ...]
        Calls o() on PROXY, prints "port <port>", waits until GO_FILE
        exists (the test kills that server meanwhile), calls o() again on
        the same proxy and prints "ok <port>" or "error <type id>".

    grid_peer.py metrics LOCATOR SERVER_ID VIEW [--Ice.Prop=value ...]
        Through an IceGrid admin session (IceGrid::Admin::getServerAdmin),
        reads the metrics view VIEW of the deployed server SERVER_ID from
        its Metrics admin facet (IceMX::MetricsAdmin::getMetricsView);
        prints "<map> <id> <total> <current> <failures>" per entry, then
        "end"."""
import os
import signal
import sys
import time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice(os.path.join(HERE, "..", "..", "benches", "Bench.ice"))
import Bench  # noqa: E402


class LatencyI(Bench.Latency):
    def o(self, current):
        pass


def init(locator, args):
    data = Ice.InitializationData()
    data.properties = Ice.createProperties(args)
    if locator:
        data.properties.setProperty("Ice.Default.Locator", locator)
    return Ice.initialize(data)


def call(communicator, text):
    """o() on a fresh proxy; the port of the connection used."""
    prx = Bench.LatencyPrx.uncheckedCast(communicator.stringToProxy(text))
    prx.o()
    return prx.ice_getConnection().getInfo().remotePort


def server(locator, adapter_id, group, args):
    communicator = init(locator, args)
    props = communicator.getProperties()
    if not props.getProperty("BenchAdapter.Endpoints"):
        props.setProperty("BenchAdapter.Endpoints", "tcp -h 127.0.0.1")
    if adapter_id:
        props.setProperty("BenchAdapter.AdapterId", adapter_id)
    if group and group != "-":
        props.setProperty("BenchAdapter.ReplicaGroupId", group)
    adapter = communicator.createObjectAdapter("BenchAdapter")
    adapter.add(LatencyI(), Ice.stringToIdentity("a"))
    adapter.activate()
    signal.signal(signal.SIGTERM, lambda *_: communicator.shutdown())
    port = adapter.getEndpoints()[0].getInfo().port
    print("READY %d" % port, flush=True)
    communicator.waitForShutdown()
    communicator.destroy()


def client(locator, text, count, args):
    ports = []
    try:
        for _ in range(count):
            with init(locator, args) as communicator:
                ports.append(call(communicator, text))
        print("ok " + " ".join(str(p) for p in ports), flush=True)
    except Ice.Exception as e:
        print("error " + e.ice_id(), flush=True)


def failover(locator, text, go_file, args):
    with init(locator, args) as communicator:
        prx = Bench.LatencyPrx.uncheckedCast(communicator.stringToProxy(text))
        prx.o()
        print("port %d" % prx.ice_getConnection().getInfo().remotePort, flush=True)
        deadline = time.time() + 20
        while not os.path.exists(go_file) and time.time() < deadline:
            time.sleep(0.02)
        try:
            prx.o()
            print("ok %d" % prx.ice_getConnection().getInfo().remotePort, flush=True)
        except Ice.Exception as e:
            print("error " + e.ice_id(), flush=True)


def create_session(router, secure):
    if secure:
        router.createSessionFromSecureConnection()
    else:
        router.createSession("python", "python")


def glacier2(router_text, text, args, secure=False):
    import Glacier2

    with init(None, args) as communicator:
        try:
            router = Glacier2.RouterPrx.checkedCast(communicator.stringToProxy(router_text))
            create_session(router, secure)
            prx = Bench.LatencyPrx.uncheckedCast(communicator.stringToProxy(text))
            prx.ice_router(router).o()
            try:
                router.destroySession()
            except Ice.ConnectionLostException:
                pass  # the router closes the connection as it answers
            print("ok", flush=True)
        except Ice.Exception as e:
            print("error " + e.ice_id(), flush=True)


def glacier2_callback(router_text, args, secure=False):
    import threading

    import Glacier2

    called = threading.Event()

    class CallbackI(Bench.Latency):
        def o(self, current):
            called.set()

    with init(None, args) as communicator:
        router = Glacier2.RouterPrx.checkedCast(communicator.stringToProxy(router_text))
        create_session(router, secure)
        adapter = communicator.createObjectAdapterWithRouter("Callback", router)
        identity = Ice.Identity("cb", router.getCategoryForClient())
        prx = adapter.add(CallbackI(), identity)
        adapter.activate()
        print("PROXY " + communicator.proxyToString(prx), flush=True)
        if called.wait(20):
            print("called", flush=True)
        try:
            router.destroySession()
        except Ice.ConnectionLostException:
            pass


def metrics(locator, server_id, view, args):
    import IceGrid
    import IceMX

    communicator = init(locator, args)
    try:
        registry = IceGrid.RegistryPrx.checkedCast(
            communicator.stringToProxy("IceGrid/Registry")
        )
        session = registry.createAdminSession("floe", "test")
        try:
            admin = session.getAdmin().getServerAdmin(server_id)
            facet = IceMX.MetricsAdminPrx.checkedCast(admin, "Metrics")
            maps, _ = facet.getMetricsView(view)
            for name in sorted(maps):
                for m in maps[name]:
                    print(name, m.id, m.total, m.current, m.failures)
            print("end")
        finally:
            session.destroy()
    finally:
        communicator.destroy()


def main():
    args = sys.argv[1:]
    props = [a for a in args if a.startswith("--")]
    pos = [a for a in args if not a.startswith("--")]
    mode = pos[0]
    if mode == "server":
        server(*(pos[1:4] + [None] * (4 - len(pos))), props)
    elif mode == "client":
        client(pos[1], pos[2], int(pos[3]), props)
    elif mode == "glacier2":
        glacier2(pos[1], pos[2], props)
    elif mode == "glacier2-callback":
        glacier2_callback(pos[1], props)
    elif mode == "glacier2-secure":
        glacier2(pos[1], pos[2], props, secure=True)
    elif mode == "glacier2-callback-secure":
        glacier2_callback(pos[1], props, secure=True)
    elif mode == "failover":
        failover(pos[1], pos[2], pos[3], props)
    elif mode == "metrics":
        metrics(pos[1], pos[2], pos[3], props)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
