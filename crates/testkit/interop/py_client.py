#!/usr/bin/python3
"""Ice 3.7 Python client of the floe interop suite.

    /usr/bin/python3 py_client.py "<endpoint>" [--only=name,name] [--Ice.Prop=value ...]

Runs the scripted checks against Interop::Test at "test:<endpoint>" and prints one
"PASS <name>" or "FAIL <name>: <detail>" line per check, then
"SUMMARY <passed> passed, <failed> failed". Exit status 0 only if all passed.
The check names and semantics are the same in cpp_client.cpp and the floe driver."""
import os
import sys
import threading
import time

import Ice

HERE = os.path.dirname(os.path.abspath(__file__))
Ice.loadSlice("", ["-I" + HERE, os.path.join(HERE, "Interop.ice")])
import Interop  # noqa: E402


class CheckFailed(Exception):
    pass


def expect(cond, detail):
    if not cond:
        raise CheckFailed(detail)


def show(v):
    """repr() that survives Ice.Unset (whose repr is broken in 3.7.8)."""
    if v is Ice.Unset:
        return "Unset"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return repr(v)


def expect_eq(got, want, what):
    if got != want:
        raise CheckFailed("%s: got %s, want %s" % (what, show(got), show(want)))


def expect_raises(exc_type, fn):
    try:
        fn()
    except exc_type as e:
        return e
    except Exception as e:  # noqa: BLE001
        raise CheckFailed("expected %s, got %s: %s" % (exc_type.__name__, type(e).__name__, e))
    raise CheckFailed("expected %s, got no exception" % exc_type.__name__)


def wait_total(test, want):
    deadline = time.time() + 5.0
    total = test.getOnewayTotal()
    while total != want and time.time() < deadline:
        time.sleep(0.02)
        total = test.getOnewayTotal()
    expect_eq(total, want, "oneway total")


class CallbackI(Interop.Callback):
    def __init__(self):
        self.calls = 0

    def add(self, a, b, current):
        self.calls += 1
        return a + b


def mixed(name, weight, flag, values):
    return Interop.Mixed(name, weight, flag, list(values))


def checks(comm, endpoint):
    test = Interop.TestPrx.uncheckedCast(comm.stringToProxy("test:" + endpoint))
    out = []

    def check(fn):
        out.append((fn.__name__, fn))
        return fn

    @check
    def ping():
        test.ice_ping()

    @check
    def is_a():
        expect(test.ice_isA("::Interop::Test"), "ice_isA(::Interop::Test) is false")
        expect(not test.ice_isA("::Interop::Callback"), "ice_isA(::Interop::Callback) is true")

    @check
    def ids():
        ids = test.ice_ids()
        expect_eq(list(ids), ["::Ice::Object", "::Interop::Test"], "ice_ids")
        expect_eq(test.ice_id(), "::Interop::Test", "ice_id")

    @check
    def prims():
        r = test.opPrims(True, 200, -2, 0x01020304, -1234567890123, 1.5, -2.25, "h\u00e9llo \u20ac")
        expect_eq(tuple(r), ("h\u00e9llo \u20ac", True, 200, -2, 0x01020304, -1234567890123, 1.5, -2.25),
                  "opPrims")

    @check
    def prims_extremes():
        big = "x" * 300 + "\U0001F600"
        r = test.opPrims(False, 0, -32768, -2147483648, -(2 ** 63), -3.4028234663852886e38, 1e308, big)
        expect_eq(tuple(r), (big, False, 0, -32768, -2147483648, -(2 ** 63), -3.4028234663852886e38, 1e308),
                  "opPrims min")
        r = test.opPrims(True, 255, 32767, 2147483647, 2 ** 63 - 1, 3.4028234663852886e38, -1e-300, "")
        expect_eq(tuple(r), ("", True, 255, 32767, 2147483647, 2 ** 63 - 1, 3.4028234663852886e38, -1e-300),
                  "opPrims max")

    @check
    def byte_seq():
        expect_eq(test.opByteSeq(b""), b"", "empty")
        expect_eq(test.opByteSeq(bytes([1, 2, 3])), bytes([1, 2, 3]), "small")
        data = bytes((i * 31 + 7) % 256 for i in range(500000))
        expect(test.opByteSeq(data) == data, "500000-byte echo differs")

    @check
    def seqs():
        v = Interop.Seqs([True, False, True], bytes([0, 1, 255]), [-1, 2, 32767], list(range(-150, 150)),
                         [2 ** 40, -5], [0.5, -1.25], [3.125, -1e300], ["a", "", "h\u00e9"],
                         [["x"], [], ["y", "z"]])
        r = test.opSeqs(v)
        expect_eq(list(r.boolSeq), v.boolSeq, "boolSeq")
        expect_eq(bytes(r.byteSeq), v.byteSeq, "byteSeq")
        expect_eq(list(r.shortSeq), v.shortSeq, "shortSeq")
        expect_eq(list(r.intSeq), v.intSeq, "intSeq")
        expect_eq(list(r.longSeq), v.longSeq, "longSeq")
        expect_eq(list(r.floatSeq), v.floatSeq, "floatSeq")
        expect_eq(list(r.doubleSeq), v.doubleSeq, "doubleSeq")
        expect_eq(list(r.stringSeq), v.stringSeq, "stringSeq")
        expect_eq([list(s) for s in r.stringSeqSeq], v.stringSeqSeq, "stringSeqSeq")

    @check
    def dicts():
        a = {"one": 1, "two": 2, "neg": -3}
        b = {1: "a", -7: "b"}
        c = {"m": mixed("n", 0.5, True, [1, 2]), "e": mixed("", 0.0, False, [])}
        r, ob, oc = test.opDicts(a, b, c)
        expect_eq(r, a, "return")
        expect_eq(ob, b, "ob")
        expect_eq(oc, c, "oc")

    @check
    def enums():
        r, os_, ocs = test.opEnums(Interop.Color.Blue, Interop.Sparse.C,
                                   [Interop.Color.Red, Interop.Color.Green, Interop.Color.Blue])
        expect_eq(r, Interop.Color.Blue, "return")
        expect_eq(os_, Interop.Sparse.C, "os")
        expect_eq(list(ocs), [Interop.Color.Red, Interop.Color.Green, Interop.Color.Blue], "ocs")
        r, os_, ocs = test.opEnums(Interop.Color.Red, Interop.Sparse.A, [])
        expect_eq((r, os_, list(ocs)), (Interop.Color.Red, Interop.Sparse.A, []), "second call")

    @check
    def structs():
        p = Interop.Point(1, -2)
        m = mixed("mix", 2.5, True, [1, 2, 3])
        n = Interop.Nested(Interop.Point(3, 4), mixed("inner", -0.5, False, []), {"k": 1},
                           Interop.Color.Green, [Interop.Point(5, 6), Interop.Point(7, 8)])
        ps = [Interop.Point(1, 2), Interop.Point(3, 4), Interop.Point(-5, 6)]
        ms = [mixed("a", 1.0, False, [9]), mixed("", 0.0, True, [])]
        rn, op, om, ops, oms = test.opStructs(p, m, n, ps, ms)
        expect_eq(rn, n, "return")
        expect_eq(op, p, "op")
        expect_eq(om, m, "om")
        expect_eq(list(ops), ps, "ops")
        expect_eq(list(oms), ms, "oms")

    @check
    def optionals_set():
        m = mixed("o", 1.0, True, [4])
        r = test.opOptional(1, 5, "s", Interop.Point(1, 2), [1, 2, 3], m, Interop.Color.Blue, True)
        expect_eq(r[0], 5, "return")
        expect_eq(r[1], "s", "os")
        expect_eq(r[2], Interop.Point(1, 2), "op")
        expect_eq(list(r[3]), [1, 2, 3], "oiseq")
        expect_eq(r[4], m, "om")
        expect_eq(r[5], Interop.Color.Blue, "oc")
        expect_eq(r[6], True, "obb")

    @check
    def optionals_unset():
        U = Ice.Unset
        r = test.opOptional(0, U, U, U, U, U, U, U)
        expect(all(x is U for x in r), "expected all unset, got %s" % show(r))
        r = test.opOptional(2, 9, U, U, U, U, U, False)
        expect_eq(r[0], 9, "return")
        expect(all(x is U for x in r[1:6]), "expected unset outs, got %s" % show(r))
        expect_eq(r[6], False, "obb")

    @check
    def class_base():
        r = test.opBase(Interop.Base(5))
        expect_eq(type(r), Interop.Base, "type")
        expect_eq(r.a, 5, "a")

    @check
    def class_derived():
        r = test.opBase(Interop.Derived(6, "d"))
        expect_eq(type(r), Interop.Derived, "type")
        expect_eq((r.a, r.s), (6, "d"), "members")

    @check
    def class_null():
        expect(test.opBase(None) is None, "null class did not come back null")

    @check
    def class_graph_cycle():
        n1 = Interop.Node(1, None)
        n2 = Interop.Node(2, n1)
        n1.next = n2
        r = test.opGraph(n1)
        expect_eq((r.v, r.next.v), (1, 2), "values")
        expect(r.next.next is r, "cycle not preserved")
        n1.next = None

    @check
    def class_shared():
        b = Interop.Base(9)
        r = test.opPair(Interop.Pair(b, b))
        expect(r.x is r.y, "shared instance came back as two instances")
        expect_eq(r.x.a, 9, "x.a")
        r = test.opPair(Interop.Pair(Interop.Base(1), Interop.Derived(2, "z")))
        expect_eq(type(r.y), Interop.Derived, "y type")
        expect_eq((r.x.a, r.y.a, r.y.s), (1, 2, "z"), "members")

    @check
    def class_optional_members():
        r = test.opWithOpt(Interop.WithOpt(1, 2, "z"))
        expect_eq((r.a, r.b, r.s), (1, 2, "z"), "set")
        r = test.opWithOpt(Interop.WithOpt(3))
        expect_eq(r.a, 3, "a")
        expect(r.b is Ice.Unset and r.s is Ice.Unset, "expected unset members, got %s %s" % (show(r.b), show(r.s)))

    @check
    def class_unknown_sliced():
        r = test.getUnknownClass()
        expect_eq(type(r), Interop.Derived, "type")
        expect_eq((r.a, r.s), (7, "known"), "members")

    @check
    def exc_base():
        e = expect_raises(Interop.BaseErr, lambda: test.throwErr(1))
        expect_eq(type(e), Interop.BaseErr, "type")
        expect_eq(e.reason, "base", "reason")

    @check
    def exc_derived():
        e = expect_raises(Interop.DerivedErr, lambda: test.throwErr(2))
        expect_eq((e.reason, e.code), ("derived", 42), "members")

    @check
    def exc_none():
        test.throwErr(0)

    @check
    def exc_sliced_known():
        e = expect_raises(Interop.DerivedErr, lambda: test.throwSliced(1))
        expect_eq((e.reason, e.code), ("sliced", 43), "members")

    @check
    def exc_sliced_unknown():
        e = expect_raises(Interop.DerivedErr, lambda: test.throwSliced(2))
        expect_eq(type(e), Interop.DerivedErr, "type")
        expect_eq((e.reason, e.code), ("secret", 44), "members")

    @check
    def exc_undeclared():
        e = expect_raises(Ice.UnknownUserException, lambda: test.throwUndeclared())
        expect("Interop::BaseErr" in e.unknown, "unknown = %r" % e.unknown)

    @check
    def exc_non_ice():
        expect_raises(Ice.UnknownException, lambda: test.throwNonIce())

    @check
    def object_not_exist():
        missing = Interop.TestPrx.uncheckedCast(comm.stringToProxy("missing:" + endpoint))
        e = expect_raises(Ice.ObjectNotExistException, lambda: missing.ice_ping())
        expect_eq(e.id.name, "missing", "id")
        expect_raises(Ice.ObjectNotExistException, lambda: missing.getFacet())

    @check
    def facet_not_exist():
        expect_raises(Ice.FacetNotExistException, lambda: test.ice_facet("nope").ice_ping())

    @check
    def operation_not_exist():
        u = Interop.UnimplementedPrx.uncheckedCast(test)
        e = expect_raises(Ice.OperationNotExistException, lambda: u.missing())
        expect_eq(e.operation, "missing", "operation")

    @check
    def proxy_param():
        p = comm.stringToProxy("cat/id -f fac -o:tcp -h 127.0.0.1 -p 12345 -t 500")
        r = test.opProxy(p)
        expect_eq(comm.proxyToString(r), comm.proxyToString(p), "proxy")
        expect(test.opProxy(None) is None, "null proxy did not come back null")
        r = Interop.TestPrx.uncheckedCast(test.opProxy(test.ice_facet("facetA")))
        expect_eq(r.getFacet(), "facetA", "call through returned proxy")

    @check
    def facets():
        expect_eq(test.getFacet(), "", "default facet")
        fa = Interop.TestPrx.uncheckedCast(test.ice_facet("facetA"))
        expect_eq(fa.getFacet(), "facetA", "facetA")

    @check
    def context():
        expect_eq(test.getContext(), {}, "empty")
        expect_eq(test.getContext({"a": "b", "k": "v"}), {"a": "b", "k": "v"}, "per call")
        expect_eq(Interop.TestPrx.uncheckedCast(test.ice_context({"p": "q"})).getContext(), {"p": "q"},
                  "proxy context")

    @check
    def oneway():
        test.reset()
        ow = Interop.TestPrx.uncheckedCast(test.ice_oneway())
        for n in range(1, 6):
            ow.onewayAdd(n)
        wait_total(test, 15)

    @check
    def batch_oneway():
        test.reset()
        b = Interop.TestPrx.uncheckedCast(test.ice_batchOneway())
        b.onewayAdd(10)
        b.onewayAdd(20)
        time.sleep(0.2)
        expect_eq(test.getOnewayTotal(), 0, "total before flush")
        b.ice_flushBatchRequests()
        wait_total(test, 30)

    @check
    def compress():
        z = Interop.TestPrx.uncheckedCast(test.ice_compress(True))
        data = bytes(i % 7 for i in range(100000))
        expect(z.opByteSeq(data) == data, "compressed echo differs")
        expect_eq(z.opByteSeq(b"ab"), b"ab", "small compressed echo")

    @check
    def idempotent_retry():
        test.reset()
        expect_eq(test.idemDropOnce(), 2, "idemDropOnce")

    @check
    def normal_no_retry():
        test.reset()
        expect_raises(Ice.ConnectionLostException, lambda: test.dropOnce())
        expect_eq(test.dropOnce(), 2, "second dropOnce")

    @check
    def concurrency():
        test.ice_ping()  # connect first: time the dispatch, not a handshake
        start = time.time()
        futures = [test.sleepMsAsync(500) for _ in range(4)]
        results = [f.result() for f in futures]
        elapsed = time.time() - start
        expect_eq(results, [500] * 4, "results")
        expect(elapsed < 1.5, "4 x sleepMs(500) took %.2fs: not dispatched concurrently" % elapsed)

    @check
    def bidir():
        adapter = comm.createObjectAdapter("")
        cb = CallbackI()
        adapter.add(cb, Ice.Identity("cb", ""))
        adapter.activate()
        test.ice_getConnection().setAdapter(adapter)
        expect_eq(test.callCallback("cb", 3, 4), 7, "callCallback")
        expect_eq(cb.calls, 1, "callback calls")

    @check
    def long_call():
        # Only run when named in --only: with client ACM (Timeout=1, Close=3,
        # no heartbeats of its own) the call survives only if the server sends
        # heartbeats while it dispatches.
        expect_eq(test.sleepMs(2500), 2500, "sleepMs(2500)")

    @check
    def acm_idle_heartbeat():
        # Only run when named in --only: against a server that drops connections
        # idle for 1 s (ACM Close=4), client heartbeats keep the connection.
        before = test.ice_getConnection()
        test.ice_ping()
        time.sleep(2.5)
        test.ice_ping()
        expect(test.ice_getConnection() == before, "the server dropped the idle connection")

    @check
    def idle_close_reconnect():
        # Only run when named in --only: against a server that closes idle
        # connections gracefully after 1 s (ACM Close=1), the next call opens a
        # new connection and succeeds.
        before = test.ice_getConnection()
        test.ice_ping()
        time.sleep(2.5)
        test.ice_ping()
        expect(test.ice_getConnection() != before, "expected a new connection after the server's idle close")

    return out


# Checks that run only when named in --only.
EXTRA_CHECKS = {"long_call", "acm_idle_heartbeat", "idle_close_reconnect"}


def main():
    if len(sys.argv) < 2:
        print("usage: py_client.py <endpoint> [--only=a,b] [--Ice.Prop=value ...]", file=sys.stderr)
        return 2
    endpoint = sys.argv[1]
    only = None
    rest = []
    for a in sys.argv[2:]:
        if a.startswith("--only="):
            only = set(a[len("--only="):].split(","))
        else:
            rest.append(a)
    props = Ice.createProperties(rest)
    props.setProperty("Ice.Warn.Connections", "0")
    init = Ice.InitializationData()
    init.properties = props
    passed = failed = 0
    with Ice.initialize(init) as comm:
        for name, fn in checks(comm, endpoint):
            if (only is None and name in EXTRA_CHECKS) or (only is not None and name not in only):
                continue
            try:
                fn()
                print("PASS %s" % name, flush=True)
                passed += 1
            except Exception as e:  # noqa: BLE001
                detail = str(e) if isinstance(e, CheckFailed) else "%s: %s" % (type(e).__name__, e)
                print("FAIL %s: %s" % (name, detail.replace("\n", " | ")), flush=True)
                failed += 1
    print("SUMMARY %d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
