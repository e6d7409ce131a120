# The Ice 3.7 client of tests/prometheus.rs:
#   clients.py PROXY N   calls echo("hello") N times, ice_ping once, then
#                        ice_ping on an object that does not exist, closes
#                        its connection and prints "done echo=N".
import os, sys, Ice
Ice.loadSlice(os.path.join(os.path.dirname(os.path.abspath(__file__)), "Prom.ice"))
import Prom

with Ice.initialize([]) as ic:
    proxy, n = sys.argv[1], int(sys.argv[2])
    svc = Prom.SvcPrx.uncheckedCast(ic.stringToProxy(proxy))
    for _ in range(n):
        assert svc.echo("hello") == "hello"
    svc.ice_ping()
    try:
        svc.ice_identity(Ice.stringToIdentity("nobody")).ice_ping()
        sys.exit("nobody answered ice_ping")
    except Ice.ObjectNotExistException:
        pass
    svc.ice_getConnection().close(Ice.ConnectionClose.GracefullyWithWait)
    print("done echo=%d" % n, flush=True)
