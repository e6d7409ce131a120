#!/usr/bin/python3
"""Ice for Python server of the floe conformance suite, for Ice 3.7 and
Ice 3.8 (see ice_compat.py for what differs).

    /usr/bin/python3 server.py <slice dir>
    <Ice 3.8 venv>/bin/python server.py <slice dir>

Serves every interface of Conformance.ice (with the server-only types of
ServerOnly.ice) on two communicators: one with the default properties and
one with Ice.AcceptClassCycles=1, each on its own port of 127.0.0.1, with
servant locators (Located); the first also has a second adapter of facets
and default servants (Faceted). Prints
"READY <port> <cycles port> <facets port>" and serves until stdin closes."""
import os
import sys

import Ice

from ice_compat import ICE38, UNSET, initialize, load_slice

SLICE = sys.argv[1]
load_slice(SLICE, [os.path.join(SLICE, f) for f in ("Conformance.ice", "ServerOnly.ice")])
import Conf  # noqa: E402


def merged(p1, p2):
    out = dict(p1)
    out.update(p2)
    return out


def rev(seq):
    return list(reversed(seq)) if not isinstance(seq, bytes) else seq[::-1]


class OperationsI(Conf.Operations):
    def __init__(self):
        self.last = 0

    def opVoid(self, current):
        pass

    def opByte(self, p1, p2, current):
        return (p1, p2)

    def opBool(self, p1, p2, current):
        return (p1, p2)

    def opShortIntLong(self, p1, p2, p3, current):
        return (p3, p1, p2, p3)

    def opFloatDouble(self, p1, p2, current):
        return (p2, p1, p2)

    def opString(self, p1, p2, current):
        return (p1 + p2, p2 + p1)

    def opEnum(self, p1, p2, current):
        return (p1, p2)

    def opStruct(self, p1, p2, current):
        return (p1, p2)

    def opNested(self, p1, current):
        return (p1, p1)

    def opDefaults(self, current):
        return Conf.Defaults()

    def opDefaultRecord(self, current):
        return Conf.Record()

    def _seq(self, p1, current):
        return (rev(p1), p1)

    opBoolSeq = opByteSeq = opShortSeq = opIntSeq = opLongSeq = _seq
    opFloatSeq = opDoubleSeq = opStringSeq = opColorSeq = _seq
    opPointSeq = opRecordSeq = opIntSeqSeq = opStringSeqSeq = _seq

    def _dict(self, p1, p2, current):
        return (merged(p1, p2), p1)

    opByteBoolDict = opShortIntDict = opLongFloatDict = opIntDoubleDict = _dict
    opStringStringDict = opStringColorDict = opColorStringDict = _dict
    opStringIntSeqDict = opPointStringDict = opStringRecordDict = _dict

    def opIdempotent(self, p, current):
        return p + 1

    def opAmd(self, s, current):
        f = Ice.Future()
        f.set_result("amd:" + s)
        return f

    def opContext(self, current):
        return current.ctx

    def opProxy(self, p1, current):
        return (p1, p1)

    def opOnewaySet(self, v, current):
        self.last = v

    def opOnewayGet(self, current):
        return self.last


class OptionalsI(Conf.Optionals):
    def _opt(self, p1, current):
        return (p1, p1)

    opOptByte = opOptBool = opOptShort = opOptInt = opOptLong = _opt
    opOptFloat = opOptDouble = opOptString = opOptColor = opOptPoint = _opt
    opOptRecord = opOptIntSeq = opOptStringSeq = opOptPointSeq = _opt
    opOptRecordSeq = opOptShortIntDict = opOptStringRecordDict = _opt
    opOptBase = opOptProxy = _opt

    def opMixed(self, s, a, i, current):
        return (a, s, a + 1, i)

    def opWithOptionals(self, w, current):
        return w

    def opOptError(self, req, i, s, current):
        raise Conf.OptError(req, i, s)


def count_nodes(n):
    seen = set()
    while n is not None and id(n) not in seen:
        seen.add(id(n))
        n = n.next
    return len(seen)


def chain(n, cycle):
    nodes = [Conf.Node(i + 1, None) for i in range(n)]
    for a, b in zip(nodes, nodes[1:]):
        a.next = b
    if cycle and nodes:
        nodes[-1].next = nodes[0]
    return nodes[0] if nodes else None


class ObjectsI(Conf.Objects):
    def opBase(self, p1, current):
        return (p1, p1)

    def opPair(self, p, current):
        return p

    def opBaseSeq(self, p, current):
        return p

    def opBaseDict(self, p, current):
        return p

    def opCarrier(self, h, current):
        return h

    def opValue(self, v, current):
        return v

    def opAllTypes(self, a, current):
        return a

    def opCompact(self, c, current):
        return c

    def opNode(self, n, current):
        return n

    def countNodes(self, n, current):
        return count_nodes(n)

    def makeCycle(self, n, current):
        return chain(n, True)

    def makeChain(self, n, current):
        return chain(n, False)

    def opBaseSliced(self, p, current):
        return p


def circle():
    return Conf.Circle("c", 1.0, None, UNSET)


class ExceptionsI(Conf.Exceptions):
    def throwBase(self, reason, current):
        raise Conf.BaseError(reason)

    def throwDerived(self, reason, code, current):
        raise Conf.DerivedError(reason, code)

    def throwDerivedAsDerived(self, reason, code, current):
        raise Conf.DerivedError(reason, code)

    def throwClassError(self, obj, current):
        raise Conf.ClassError("class", obj)

    def throwOther(self, n, current):
        raise Conf.OtherError(n)

    def throwUndeclared(self, n, current):
        raise Conf.OtherError(n)

    def throwNonIce(self, current):
        raise RuntimeError("not an Ice exception")

    def throwNotExist(self, current):
        raise Ice.ObjectNotExistException()

    def throwNothing(self, current):
        pass

    def throwServerDerived(self, current):
        raise Conf.ServerDerivedError("server", 7, "detail")

    def throwShapeError(self, current):
        raise Conf.ShapeError(circle())


class SlicedExceptionsI(Conf.SlicedExceptions):
    def throwServerDerived(self, current):
        raise Conf.ServerDerivedError("server", 7, "detail")

    def throwServerBase(self, current):
        raise Conf.ServerBaseError("server", 8)

    def throwServerClass(self, current):
        raise Conf.ServerClassError("classes", circle(), Conf.Base("b"))

    def throwShapeError(self, current):
        raise Conf.ShapeError(circle())

    def throwIsolated(self, current):
        raise Conf.IsolatedError(3)

    def throwKnown(self, current):
        raise Conf.DerivedError("known", 9)


def the_circle():
    return Conf.Circle("circle", 2.5, None, "l")


def derived():
    return Conf.Derived("d", 5, Conf.Point(1, 2))


class SlicedObjectsI(Conf.SlicedObjects):
    def getCircle(self, current):
        return the_circle()

    def getRing(self, current):
        return Conf.Ring("ring", 3.0, Conf.Shape("in"), UNSET, 0.5)

    def getSquare(self, current):
        return Conf.Square("square", 4.0)

    def getHidden(self, current):
        return Conf.Hidden("hidden")

    def getLinked(self, current):
        other = Conf.Shape("s2")
        return (Conf.Circle("c", 1.0, other, UNSET), other)

    def getShapes(self, current):
        c = circle()
        return [c, Conf.Shape("plain"), c, None, Conf.Ring("ring", 3.0, None, UNSET, 0.5)]

    def getShapeDict(self, current):
        c = circle()
        return {1: c, 2: c, 3: Conf.Shape("plain")}

    def getKeeper(self, current):
        return Conf.KeeperDerived("keeper", "x", Conf.Base("kb"), "kl")

    def checkKeeper(self, k, current):
        if isinstance(k, Conf.KeeperDerived):
            b = k.obj.b if k.obj is not None else "null"
            label = k.label if k.label is not UNSET else "unset"
            return "KeeperDerived:%s:%s:%s:%s" % (k.k, k.extra, b, label)
        if k is None:
            return "null"
        return "Keeper:" + k.k

    def checkShape(self, s, current):
        if s is None:
            return "null"
        return "%s:%s" % (s.ice_id(), s.name)

    def getDerived(self, current):
        return derived()

    def getMoreOptionals(self, current):
        return Conf.WithMoreOptionals(req=1, i=2, extra="x", more=3)


class CompactObjectsI(Conf.CompactObjects):
    def getCircle(self, current):
        return the_circle()

    def getHidden(self, current):
        return Conf.Hidden("hidden")

    def getCircleSliced(self, current):
        return the_circle()

    def getDerived(self, current):
        return derived()


class RelayingI(Conf.Relaying):
    def relayPreserved(self, r, current):
        r.raisePreserved()

    def relayUnpreserved(self, r, current):
        r.raiseUnpreserved()


class FacetedI(Conf.Faceted):
    def __init__(self, name):
        self.name = name

    def which(self, current):
        return "%s:%s:%s" % (self.name, current.id.name, current.facet)


class LocatorState:
    def __init__(self):
        self.last = ""


class LocatedI(Conf.Located):
    def __init__(self, state):
        self.state = state

    def whoAmI(self, current):
        return "%s/%s" % (current.id.category, current.id.name)

    def op(self, current):
        if current.id.name == "servant-user":
            raise Conf.LocatorError("servant")

    def lastFinished(self, current):
        return self.state.last

    def destroyAdapter(self, current):
        got = []

        class GoneLocator(Ice.ServantLocator):
            def locate(self, current):
                return None

            def finished(self, current, servant, cookie):
                pass

            def deactivate(self, category):
                got.append(category)

        # No endpoints: destroying an adapter that listens needs the server
        # thread pool this dispatch holds.
        adapter = current.adapter.getCommunicator().createObjectAdapter("")
        adapter.addServantLocator(GoneLocator(), "gone")
        adapter.destroy()
        return ",".join(got)


def fail(name, where):
    """What a locator raises for an identity named `<where>-<kind>`."""
    if name == where + "-user":
        raise Conf.LocatorError(where)
    if name == where + "-not-exist":
        raise Ice.ObjectNotExistException()
    if name == where + "-local":
        raise Ice.SocketException()
    if name == where + "-other":
        raise RuntimeError(where)


class LocatorI(Ice.ServantLocator):
    def __init__(self, servant, state):
        self.servant = servant
        self.state = state

    def locate(self, current):
        name = current.id.name
        if name == "missing" or (current.id.category == "" and not name.startswith("any-")):
            return None
        fail(name, "locate")
        return (self.servant, "cookie:%s/%s" % (current.id.category, name))

    def finished(self, current, servant, cookie):
        self.state.last = cookie
        fail(current.id.name, "finished")

    def deactivate(self, category):
        pass


class HookedI(Conf.Hooked):
    def ice_preMarshal(self):
        self.preMarshalled = True

    def ice_postUnmarshal(self):
        self.postUnmarshalled = True


class ValuesI(Conf.Values):
    def getMarker(self, current):
        if ICE38:
            # The Ice 3.8 Slice's class Marker: the same on the wire.
            return Conf.Marker()
        return Ice.InterfaceByValue(Conf.Marker.ice_staticId())

    def getHooked(self, current):
        return HookedI(False, False)

    def checkHooked(self, h, current):
        return "%s:%s" % (str(h.preMarshalled).lower(), str(h.postUnmarshalled).lower())


class LoudGreeterI(Conf.LoudGreeter if ICE38 else Conf.LoudGreeterDisp):
    def greet(self, name, current):
        return "hello, " + name

    def shout(self, s, current):
        return s.upper() + "!"


class ObservedI(Conf.Observed):
    def __init__(self):
        self.count = 0
        self.mode = -1

    def ice_ping(self, current=None):
        self.count += 1
        self.mode = current.mode.value

    def ice_isA(self, id, current=None):
        return id in self.ice_ids(current)

    def ice_ids(self, current=None):
        return ["::Conf::Extra", "::Conf::Observed", "::Ice::Object"]

    def pings(self, current):
        out = "%d:%d" % (self.count, self.mode)
        self.count, self.mode = 0, -1
        return out


class DeactivatingI(Conf.Deactivating):
    def deactivateSelf(self, current):
        current.adapter.deactivate()


class DeactivationI(Conf.Deactivation):
    def __init__(self):
        self.own = None

    def create(self, current):
        communicator = current.adapter.getCommunicator()
        # A thread pool of its own: waitDeactivated waits in a dispatch of
        # the server thread pool for its connections to close.
        communicator.getProperties().setProperty("Own.ThreadPool.Size", "1")
        self.own = communicator.createObjectAdapterWithEndpoints("Own", "tcp -h 127.0.0.1 -p 0")
        prx = self.own.add(DeactivatingI(), Ice.stringToIdentity("own"))
        self.own.activate()
        return Conf.DeactivatingPrx.uncheckedCast(prx)

    def waitDeactivated(self, current):
        self.own.waitForDeactivate()
        self.own.destroy()
        self.own = None
        return True


def null_state(v):
    return "unset" if v is UNSET else ("null" if v is None else "set")


class OptionalNullsI(getattr(Conf, "OptionalNulls", object)):
    def describe(self, b, p, current):
        return "%s:%s" % (null_state(b), null_state(p))

    def make(self, state, current):
        if state == "unset":
            return (UNSET, UNSET)
        if state == "null":
            return (None, None)
        ops = current.adapter.createProxy(Ice.stringToIdentity("ops"))
        return (Conf.Base("s"), Conf.OperationsPrx.uncheckedCast(ops))


def endpoint_text(info):
    kind = "tcp" if info.type() == Ice.TCPEndpointType else str(info.type())
    # Ice 3.8's endpoints have no timeout: "none" (the clients expect it).
    timeout = "none" if ICE38 else "%d" % info.timeout
    return "%s:%s:%d:%s:%s" % (kind, info.host, info.port, timeout, str(info.compress).lower())


class InfoI(Conf.Info):
    def endpointInfo(self, current):
        return endpoint_text(current.con.getEndpoint().getInfo())


def serve(props):
    communicator = initialize(props, {Conf.Hooked.ice_staticId(): HookedI})
    adapter = communicator.createObjectAdapterWithEndpoints("Conf", "tcp -h 127.0.0.1 -p 0")
    for name, servant in [("ops", OperationsI()), ("opt", OptionalsI()), ("obj", ObjectsI()),
                          ("exc", ExceptionsI()), ("sexc", SlicedExceptionsI()),
                          ("sobj", SlicedObjectsI()), ("cobj", CompactObjectsI()),
                          ("relaying", RelayingI()), ("vf", ValuesI()),
                          ("cls", LoudGreeterI()), ("obs", ObservedI()),
                          ("deact", DeactivationI()), ("info", InfoI())]:
        adapter.add(servant, Ice.stringToIdentity(name))
    if not ICE38:
        # The Ice 3.8 Slice has no OptionalNulls (no optional classes).
        adapter.add(OptionalNullsI(), Ice.stringToIdentity("optn"))
    state = LocatorState()
    locator = LocatorI(LocatedI(state), state)
    adapter.addServantLocator(locator, "loc")
    adapter.addServantLocator(locator, "")
    adapter.activate()
    facets = communicator.createObjectAdapterWithEndpoints("Facets", "tcp -h 127.0.0.1 -p 0")
    fct = Ice.stringToIdentity("fct")
    facets.add(FacetedI("fct"), fct)
    facets.addFacet(FacetedI("fct-b"), fct, "b")
    facets.addDefaultServant(FacetedI("dflt"), "dflt")
    facets.addDefaultServant(FacetedI("any"), "")
    facets.activate()
    port = adapter.getEndpoints()[0].getInfo().port
    return communicator, port, facets.getEndpoints()[0].getInfo().port


def main():
    plain, port, facets_port = serve({})
    cycles, cycles_port, _ = serve({"Ice.AcceptClassCycles": "1"})
    print("READY %d %d %d" % (port, cycles_port, facets_port), flush=True)
    sys.stdin.read()
    plain.destroy()
    cycles.destroy()


main()
