# The Ice 3.7 side of tests/metrics_admin.rs.
#   mx.py client PROXY ADMIN   calls PROXY, then dumps ADMIN's Metrics facet
#   mx.py reference PORT        the same against an Ice server (same IceMX
#                               properties) in this process
#   mx.py read ADMIN VIEW       dumps one view of ADMIN's Metrics facet
import os, sys, Ice, IceMX
Ice.loadSlice("-I" + Ice.getSliceDir(), [os.path.join(os.path.dirname(__file__), "Mx.ice")])
import MxTest

PROPS = ["IceMX.Metrics.Debug.GroupBy=id", "IceMX.Metrics.ByParent.GroupBy=parent",
         "IceMX.Metrics.Off.Disabled=1",
         # RetainDetached: the echo entry detaches three times, then the
         # ice_ping one twice; both stay (an entry counts once).
         "IceMX.Metrics.Retain.Map.Dispatch.GroupBy=operation",
         "IceMX.Metrics.Retain.Map.Dispatch.RetainDetached=2",
         "IceMX.Metrics.Retain.Map.Dispatch.Accept.parent=^A$",
         # The service connection by state (holding, active, closing,
         # closed: one entry each).
         "IceMX.Metrics.ByState.Map.Connection.GroupBy=state",
         "IceMX.Metrics.ByState.Map.Connection.Accept.parent=^A$"]

def line(view, name, m, ind=""):
    fields = {k: v for k, v in vars(m).items() if k not in ("remotes", "collocated", "totalLifetime", "id")}
    out = "%s%s %s %s [%s] %s" % (ind, view, name, type(m).__name__, m.id,
                                  " ".join("%s=%s" % kv for kv in sorted(fields.items())))
    print(out)
    for r in getattr(m, "remotes", None) or []:
        line(view, "Remote", r, ind + "  ")

def dump(metrics, views):
    enabled, disabled = metrics.getMetricsViewNames()
    print("views enabled=%s disabled=%s" % (",".join(enabled), ",".join(disabled)))
    for v in views:
        view, ts = metrics.getMetricsView(v)
        print("%s maps=%s timestamp_ok=%s" % (v, ",".join(sorted(view)), ts > 1600000000000))
        for name in sorted(view):
            if name == "Thread":
                continue
            for m in view[name]:
                if "admin" in m.id or m.id == "Ice.Admin":
                    continue  # the admin calls themselves differ in size
                line(v, name, m)
    for f in metrics.getMapMetricsFailures("Debug", "Dispatch"):
        print("failures Debug Dispatch [%s] %s" % (f.id, sorted(f.failures.items())))
    try:
        metrics.getMetricsView("NoSuchView")
        print("unknown view: no exception")
    except IceMX.UnknownMetricsView:
        print("unknown view: UnknownMetricsView")

def calls(ic, proxy):
    svc = MxTest.SvcPrx.uncheckedCast(ic.stringToProxy(proxy))
    for _ in range(3):
        assert svc.echo("hello") == "hello"
    svc.ice_ping()
    try:
        ic.stringToProxy(proxy).ice_identity(Ice.stringToIdentity("nobody")).ice_ping()
    except Ice.ObjectNotExistException:
        pass
    svc.ice_getConnection().close(Ice.ConnectionClose.GracefullyWithWait)

def metrics_of(ic, admin):
    return IceMX.MetricsAdminPrx.checkedCast(ic.stringToProxy(admin).ice_facet("Metrics"))

def closed_seen(metrics):
    # The server sees the client's CloseConnection, then its end of the
    # socket, after close() returned here: wait (at most 5 s) until its
    # ByState view has the connection closed, as both servers do.
    import time
    for _ in range(100):
        view, _ = metrics.getMetricsView("ByState")
        if any(m.id == "closed" for m in view.get("Connection", [])):
            return metrics
        time.sleep(0.05)
    return metrics

class Svc(MxTest.Svc):
    def echo(self, s, current):
        return s

with Ice.initialize(sys.argv) as ic:
    if sys.argv[1] == "client":
        calls(ic, sys.argv[2])
        dump(closed_seen(metrics_of(ic, sys.argv[3])), ["Debug", "ByParent", "Retain", "ByState"])
    elif sys.argv[1] == "reference":
        init = Ice.InitializationData()
        init.properties = Ice.createProperties()
        for p in PROPS + ["Ice.Admin.Endpoints=tcp -h 127.0.0.1", "Ice.Admin.InstanceName=ref"]:
            k, v = p.split("=", 1)
            init.properties.setProperty(k, v)
        with Ice.initialize(init) as server:
            a = server.createObjectAdapterWithEndpoints("A", "tcp -h 127.0.0.1 -p " + sys.argv[2])
            prx = a.add(Svc(), Ice.stringToIdentity("echo"))
            a.activate()
            calls(ic, prx.ice_toString())
            dump(closed_seen(metrics_of(ic, server.getAdmin().ice_toString())), ["Debug", "ByParent", "Retain", "ByState"])
    elif sys.argv[1] == "read":
        dump(metrics_of(ic, sys.argv[2]), [sys.argv[3]])
