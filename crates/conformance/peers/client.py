#!/usr/bin/python3
"""Ice for Python client of the floe conformance suite, for Ice 3.7 and
Ice 3.8 (see ice_compat.py for what differs).

    /usr/bin/python3 client.py <slice dir> <port> <cycles port> <facets port> <server kind>
    <Ice 3.8 venv>/bin/python client.py ...

The server kind is cpp, python, python38 (Ice 3.8 for Python) or floe.

Knows Conformance.ice and the client-only exceptions of ClientOnly.ice
(raised by its Relay servant, on an adapter of its own). Runs every check in four configurations
against a server on 127.0.0.1 (see CONFIGS), printing "PASS <config>/<check>"
or "FAIL <config>/<check>: <detail>" for each, then
"SUMMARY <passed> passed, <failed> failed"."""
import math
import os
import struct
import sys
import time

import Ice

from ice_compat import (ICE38, UNSET, NoValueFactoryException, UnmarshalOutOfBoundsException, initialize,
                        load_slice, unknown_text)

SLICE = sys.argv[1]
load_slice(SLICE, [os.path.join(SLICE, f) for f in ("Conformance.ice", "ClientOnly.ice")])
import Conf  # noqa: E402


class Failed(Exception):
    pass


def expect(cond, detail):
    if not cond:
        raise Failed(detail)


def eq(got, want, what):
    if got != want:
        raise Failed("%s: got %r, want %r" % (what, got, want))


def not_in_ice38(what):
    """Fails a check whose subject Ice 3.8 removed (README: excluded)."""
    if ICE38:
        raise Failed("excluded: Ice 3.8 has no " + what)


def raises(exc_type, fn, *args):
    """Calls fn and returns the exception of exc_type it must raise."""
    try:
        fn(*args)
    except exc_type as e:
        return e
    except Exception as e:  # noqa: BLE001
        raise Failed("expected %s, got %s: %s" % (exc_type.__name__, type(e).__name__, e))
    raise Failed("expected %s, got no exception" % exc_type.__name__)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


class RelayI(Conf.Relay):
    """Raises exceptions that only clients know, for a server to relay."""

    def raisePreserved(self, current):
        raise Conf.ClientPreservedError("pres", "extra", Conf.Base("rb"))

    def raiseUnpreserved(self, current):
        raise Conf.ClientDerivedError("plain", 3, "more")


class HookedI(Conf.Hooked):
    def ice_preMarshal(self):
        self.preMarshalled = True

    def ice_postUnmarshal(self):
        self.postUnmarshalled = True


def relay_proxy(communicator):
    """An adapter of the client's own on 127.0.0.1 with the Relay servant."""
    adapter = communicator.createObjectAdapterWithEndpoints("Relay", "tcp -h 127.0.0.1 -p 0")
    prx = adapter.add(RelayI(), Ice.stringToIdentity("relay"))
    adapter.activate()
    return Conf.RelayPrx.uncheckedCast(prx)


class Ctx:
    def __init__(self, communicator, port, facets_port, enc10, cycles, server, relay):
        self.communicator = communicator
        self.server = server
        self.enc10 = enc10
        self.cycles = cycles
        encoding = Ice.Encoding_1_0 if enc10 else Ice.Encoding_1_1

        def prx(name, cls):
            base = communicator.stringToProxy("%s:tcp -h 127.0.0.1 -p %d -t 10000" % (name, port))
            return cls.uncheckedCast(base.ice_encodingVersion(encoding))

        self.prx = prx
        self.ops = prx("ops", Conf.OperationsPrx)
        self.opt = prx("opt", Conf.OptionalsPrx)
        self.obj = prx("obj", Conf.ObjectsPrx)
        self.exc = prx("exc", Conf.ExceptionsPrx)
        self.sexc = prx("sexc", Conf.SlicedExceptionsPrx)
        self.sobj = prx("sobj", Conf.SlicedObjectsPrx)
        self.cobj = prx("cobj", Conf.CompactObjectsPrx)
        self.relaying = prx("relaying", Conf.RelayingPrx)
        self.relay = relay.ice_encodingVersion(encoding)

        def facet(name, facet=""):
            base = communicator.stringToProxy("%s:tcp -h 127.0.0.1 -p %d -t 10000" % (name, facets_port))
            return Conf.FacetedPrx.uncheckedCast(base.ice_encodingVersion(encoding).ice_facet(facet))

        self.facet = facet
        self.located = lambda name: prx(name, Conf.LocatedPrx)
        self.vf = prx("vf", Conf.ValuesPrx)
        self.prx_on = lambda comm, name, cls: cls.uncheckedCast(
            comm.stringToProxy("%s:tcp -h 127.0.0.1 -p %d -t 10000" % (name, port)).ice_encodingVersion(encoding))

    @staticmethod
    def chain(n):
        head = None
        for i in range(n, 0, -1):
            head = Conf.Node(i, head)
        return head


CHECKS = []


def check(name):
    def register(fn):
        CHECKS.append((name, fn))
        return fn
    return register


def record(name="r", weight=2.5, flag=True, values=(1, 2, 3), color=Conf.Color.Blue):
    return Conf.Record(name, weight, flag, list(values), color)


def derived(b="d", d=4):
    return Conf.Derived(b, d, Conf.Point(1, 2))


def same_derived(got, b, d, what):
    expect(type(got) is Conf.Derived, "%s: %r is not a Derived" % (what, got))
    eq((got.b, got.d, got.p), (b, d, Conf.Point(1, 2)), what)


# ---------------------------------------------------------------- operations

@check("ops.void")
def _(c):
    c.ops.opVoid()


@check("ops.builtins")
def _(c):
    c.ops.ice_ping()
    expect(c.ops.ice_isA("::Conf::Operations"), "ice_isA(::Conf::Operations)")
    expect(not c.ops.ice_isA("::Conf::Optionals"), "ice_isA(::Conf::Optionals)")
    eq(sorted(c.ops.ice_ids()), ["::Conf::Operations", "::Ice::Object"], "ice_ids")
    eq(c.ops.ice_id(), "::Conf::Operations", "ice_id")


@check("ops.checked_cast")
def _(c):
    expect(Conf.OperationsPrx.checkedCast(c.ops) is not None, "checkedCast to Operations")
    expect(Conf.OptionalsPrx.checkedCast(c.ops) is None, "checkedCast to Optionals")


@check("ops.byte")
def _(c):
    eq(c.ops.opByte(0xff, 0x0f), (0xff, 0x0f), "opByte(255, 15)")
    eq(c.ops.opByte(0, 0x80), (0, 0x80), "opByte(0, 128)")


@check("ops.bool")
def _(c):
    eq(c.ops.opBool(True, False), (True, False), "opBool(true, false)")
    eq(c.ops.opBool(False, True), (False, True), "opBool(false, true)")


@check("ops.short_int_long")
def _(c):
    eq(c.ops.opShortIntLong(-32768, 2147483647, -9223372036854775808),
       (-9223372036854775808, -32768, 2147483647, -9223372036854775808), "minima/maxima")
    eq(c.ops.opShortIntLong(32767, -2147483648, 9223372036854775807),
       (9223372036854775807, 32767, -2147483648, 9223372036854775807), "maxima/minima")


@check("ops.float_double")
def _(c):
    eq(c.ops.opFloatDouble(3.5, -1e300), (-1e300, 3.5, -1e300), "opFloatDouble(3.5, -1e300)")
    fmax = f32(3.4028234663852886e38)
    eq(c.ops.opFloatDouble(fmax, 5e-324), (5e-324, fmax, 5e-324), "extremes")


@check("ops.float_special")
def _(c):
    r, p3, p4 = c.ops.opFloatDouble(float("inf"), float("nan"))
    expect(math.isnan(r) and math.isnan(p4) and p3 == float("inf"), "inf/nan: %r" % ((r, p3, p4),))
    r, p3, p4 = c.ops.opFloatDouble(-0.0, float("-inf"))
    expect(r == float("-inf") and p3 == 0.0 and math.copysign(1.0, p3) == -1.0, "-0/-inf: %r" % ((r, p3, p4),))


@check("ops.string")
def _(c):
    eq(c.ops.opString("h\u00e9llo ", "w\u00f6rld \u20ac\U0001F600"),
       ("h\u00e9llo w\u00f6rld \u20ac\U0001F600", "w\u00f6rld \u20ac\U0001F600h\u00e9llo "), "unicode")
    eq(c.ops.opString("", ""), ("", ""), "empty")
    eq(c.ops.opString("a\x00b", "c"), ("a\x00bc", "ca\x00b"), "embedded NUL")


@check("ops.string_long")
def _(c):
    s = "x" * 100000
    eq(c.ops.opString(s, "y"), (s + "y", "y" + s), "100000 characters")


@check("ops.enum")
def _(c):
    eq(c.ops.opEnum(Conf.Color.Blue, Conf.Level.High), (Conf.Color.Blue, Conf.Level.High), "Blue, High")
    eq(c.ops.opEnum(Conf.Color.Red, Conf.Level.Low), (Conf.Color.Red, Conf.Level.Low), "Red, Low")


@check("ops.struct")
def _(c):
    r = record()
    eq(c.ops.opStruct(Conf.Point(1, -2), r), (Conf.Point(1, -2), r), "opStruct")


def nested():
    return Conf.Nested(Conf.Point(3, 4), record("n", -0.5, False, [7], Conf.Color.Red),
                       {"a": [1, 2], "b": []}, Conf.Level.High, [Conf.Point(1, 1), Conf.Point(2, 2)])


@check("ops.nested")
def _(c):
    n = nested()
    eq(c.ops.opNested(n), (n, n), "opNested")


@check("ops.defaults")
def _(c):
    d = c.ops.opDefaults()
    eq((d.b, d.y, d.s, d.i, d.l, d.f, d.d, d.str, d.c, d.lv),
       (True, 254, -3, 42, 1234567890123, 0.5, -1.25, "h\u00e9llo", Conf.Color.Blue, Conf.Level.Mid), "Defaults()")
    eq(Conf.Answer, 42, "Answer")


@check("ops.default_record")
def _(c):
    eq(c.ops.opDefaultRecord(), Conf.Record("", 0.0, False, [], Conf.Color.Green), "Record()")


def seq_check(name, op, value, empty=True):
    @check("ops." + name)
    def _(c):
        got = getattr(c.ops, op)(value)
        want = value[::-1]
        eq((list(got[0]), list(got[1])), (list(want), list(value)), op)
        if empty:
            got = getattr(c.ops, op)(type(value)())
            eq((len(got[0]), len(got[1])), (0, 0), op + "(empty)")


seq_check("bool_seq", "opBoolSeq", [True, False, False])
seq_check("byte_seq", "opByteSeq", bytes(range(256)) * 4)
seq_check("short_seq", "opShortSeq", [-32768, 0, 32767])
seq_check("int_seq", "opIntSeq", [-2147483648, 1, 2147483647])
seq_check("int_seq_large", "opIntSeq", list(range(-50000, 50000)), empty=False)
seq_check("long_seq", "opLongSeq", [-9223372036854775808, 2, 9223372036854775807])
seq_check("float_seq", "opFloatSeq", [0.5, -1.25, 3.0])
seq_check("double_seq", "opDoubleSeq", [1e300, -2.5, 0.0])
seq_check("string_seq", "opStringSeq", ["a", "", "h\u00e9llo"])
seq_check("color_seq", "opColorSeq", [Conf.Color.Red, Conf.Color.Blue, Conf.Color.Green])
seq_check("point_seq", "opPointSeq", [Conf.Point(i, -i) for i in range(1000)])
seq_check("record_seq", "opRecordSeq", [record("a"), record("b", values=[]), record("c", color=Conf.Color.Red)])
seq_check("int_seq_seq", "opIntSeqSeq", [[1, 2], [], [3]])
seq_check("string_seq_seq", "opStringSeqSeq", [["a", "b"], [], ["c"]])


def dict_check(name, op, p1, p2):
    @check("ops." + name)
    def _(c):
        want = dict(p1)
        want.update(p2)
        eq(getattr(c.ops, op)(p1, p2), (want, p1), op)
        eq(getattr(c.ops, op)({}, {}), ({}, {}), op + "(empty)")


dict_check("byte_bool_dict", "opByteBoolDict", {1: True, 2: False}, {2: True, 255: False})
dict_check("short_int_dict", "opShortIntDict", {-1: 1, 2: 2}, {2: -2, 32767: 3})
dict_check("long_float_dict", "opLongFloatDict", {1 << 40: 0.5}, {-(1 << 40): -0.25})
dict_check("int_double_dict", "opIntDoubleDict", {1: 0.5, 2: 1e300}, {2: -2.0})
dict_check("string_string_dict", "opStringStringDict", {"a": "x", "b": ""}, {"b": "y", "\u00e9": "z"})
dict_check("string_color_dict", "opStringColorDict", {"r": Conf.Color.Red}, {"g": Conf.Color.Green})
dict_check("color_string_dict", "opColorStringDict", {Conf.Color.Red: "r", Conf.Color.Blue: "b"},
           {Conf.Color.Blue: "B"})
dict_check("string_int_seq_dict", "opStringIntSeqDict", {"a": [1, 2], "e": []}, {"a": [3]})
dict_check("point_string_dict", "opPointStringDict", {Conf.Point(1, 2): "a"}, {Conf.Point(-1, 0): "b"})
dict_check("string_record_dict", "opStringRecordDict", {"a": record("a")}, {"b": record("b", values=[])})


@check("ops.idempotent")
def _(c):
    eq(c.ops.opIdempotent(41), 42, "opIdempotent(41)")


@check("ops.amd")
def _(c):
    eq(c.ops.opAmd("x"), "amd:x", "opAmd")


@check("ops.context")
def _(c):
    eq(c.ops.opContext(), {}, "no context")
    eq(c.ops.opContext({"c": "d"}), {"c": "d"}, "per-call context")
    eq(c.ops.ice_context({"a": "b"}).opContext(), {"a": "b"}, "per-proxy context")


@check("ops.proxy")
def _(c):
    r, p2 = c.ops.opProxy(c.ops)
    eq(Ice.identityToString(r.ice_getIdentity()), "ops", "returned identity")
    eq(Ice.identityToString(p2.ice_getIdentity()), "ops", "out identity")
    eq(r.ice_getEndpoints()[0].toString().split(" -t ")[0], c.ops.ice_getEndpoints()[0].toString().split(" -t ")[0],
       "endpoint")
    r.ice_ping()
    eq(c.ops.opProxy(None), (None, None), "null proxy")


@check("ops.oneway")
def _(c):
    v = 10 if c.enc10 else 11
    c.ops.ice_oneway().opOnewaySet(v)
    deadline = time.time() + 5
    while c.ops.opOnewayGet() != v and time.time() < deadline:
        time.sleep(0.01)
    eq(c.ops.opOnewayGet(), v, "value set oneway")


# ---------------------------------------------------------------- optionals

def opt_check(name, op, value, same=None, ice38=True):
    @check("opt." + name)
    def _(c):
        if not ice38:
            not_in_ice38("optional classes")
        got = getattr(c.opt, op)(value)
        if c.enc10:
            # Encoding 1.0 has no optional values: nothing is sent.
            eq(got, (UNSET, UNSET), op + " in 1.0")
        elif same is not None:
            expect(same(got[0], value) and same(got[1], value), "%s: got %r" % (op, got))
        else:
            eq(got, (value, value), op)
        eq(getattr(c.opt, op)(UNSET), (UNSET, UNSET), op + "(unset)")


opt_check("byte", "opOptByte", 200)
opt_check("bool", "opOptBool", True)
opt_check("short", "opOptShort", -300)
opt_check("int", "opOptInt", 1 << 20)
opt_check("long", "opOptLong", -(1 << 50))
opt_check("float", "opOptFloat", 0.25)
opt_check("double", "opOptDouble", -1e200)
opt_check("string", "opOptString", "h\u00e9llo")
opt_check("enum", "opOptColor", Conf.Color.Blue)
opt_check("fixed_struct", "opOptPoint", Conf.Point(5, -6))
opt_check("var_struct", "opOptRecord", record())
opt_check("int_seq", "opOptIntSeq", [1, 2, 3])
opt_check("string_seq", "opOptStringSeq", ["a", "", "b"])
opt_check("fixed_struct_seq", "opOptPointSeq", [Conf.Point(1, 2), Conf.Point(3, 4)])
opt_check("var_struct_seq", "opOptRecordSeq", [record("a"), record("b")])
opt_check("dict", "opOptShortIntDict", {1: 2, -3: 4})
opt_check("struct_dict", "opOptStringRecordDict", {"a": record("a")})
opt_check("class", "opOptBase", Conf.Base("ob"),
          same=lambda got, v: type(got) is Conf.Base and got.b == v.b, ice38=False)


@check("opt.proxy")
def _(c):
    r, p3 = c.opt.opOptProxy(c.ops)
    if c.enc10:
        eq((r, p3), (UNSET, UNSET), "opOptProxy in 1.0")
    else:
        eq(Ice.identityToString(r.ice_getIdentity()), "ops", "returned")
        eq(Ice.identityToString(p3.ice_getIdentity()), "ops", "out")
    eq(c.opt.opOptProxy(UNSET), (UNSET, UNSET), "unset")


@check("opt.mixed")
def _(c):
    got = c.opt.opMixed("s", 5, 7)
    if c.enc10:
        eq(got, (5, UNSET, 6, UNSET), "opMixed in 1.0")
    else:
        eq(got, (5, "s", 6, 7), "opMixed")
    eq(c.opt.opMixed(UNSET, -1, UNSET), (-1, UNSET, 0, UNSET), "opMixed(unset)")


# Ice 3.8's WithOptionals has no optional class member obj: with Ice 3.8
# these checks are about the other members. An Ice 3.8 server fails the
# dispatch of a WithOptionals whose obj is set ("cannot skip optional
# class"): a 3.7 client leaves it unset there.
@check("opt.class_members_set")
def _(c):
    members = [1, 2, "s", Conf.Point(1, 2), [1, 2], Conf.Color.Blue, record()]
    if ICE38:
        w = Conf.WithOptionals(*members)
    else:
        w = Conf.WithOptionals(*members + [UNSET if c.server == "python38" else Conf.Base("o")])
    got = c.opt.opWithOptionals(w)
    expect(type(got) is Conf.WithOptionals, "type %r" % type(got))
    members = (got.req, got.i, got.s, got.p, got.seq, got.c, got.r)
    if c.enc10:
        # Encoding 1.0 drops optional class members.
        eq(members, (1,) + (UNSET,) * 6, "members in 1.0")
        if not ICE38:
            eq(got.obj, UNSET, "obj in 1.0")
    else:
        eq(members, (1, 2, "s", Conf.Point(1, 2), [1, 2], Conf.Color.Blue, record()), "members")
        if not ICE38 and c.server == "python38":
            eq(got.obj, UNSET, "obj")
        elif not ICE38:
            expect(type(got.obj) is Conf.Base and got.obj.b == "o", "obj %r" % got.obj)


@check("opt.class_members_unset")
def _(c):
    got = c.opt.opWithOptionals(Conf.WithOptionals(3))
    members = (got.req, got.i, got.s, got.p, got.seq, got.c, got.r)
    if ICE38:
        eq(members, (3,) + (UNSET,) * 6, "members")
    else:
        eq(members + (got.obj,), (3,) + (UNSET,) * 7, "members")


@check("opt.exception")
def _(c):
    e = raises(Conf.OptError, c.opt.opOptError, 1, 2, "s")
    eq((e.req, e.i, e.s), (1, UNSET, UNSET) if c.enc10 else (1, 2, "s"), "OptError")
    e = raises(Conf.OptError, c.opt.opOptError, 4, UNSET, UNSET)
    eq((e.req, e.i, e.s), (4, UNSET, UNSET), "OptError(unset)")


# ---------------------------------------------------------------- objects

@check("obj.base")
def _(c):
    r, p2 = c.obj.opBase(Conf.Base("b"))
    expect(type(r) is Conf.Base and r.b == "b", "returned %r" % r)
    expect(r is p2, "the returned and out instances are not one")


@check("obj.derived")
def _(c):
    r, p2 = c.obj.opBase(derived())
    same_derived(r, "d", 4, "returned")
    expect(r is p2, "the returned and out instances are not one")


@check("obj.null")
def _(c):
    eq(c.obj.opBase(None), (None, None), "opBase(null)")


@check("obj.compact_id")
def _(c):
    r = c.obj.opCompact(Conf.Compact("c", -9))
    expect(type(r) is Conf.Compact and (r.b, r.c) == ("c", -9), "opCompact %r" % r)
    r, _ = c.obj.opBase(Conf.Compact("as base", 1 << 40))
    expect(type(r) is Conf.Compact and r.c == 1 << 40, "opBase(Compact) %r" % r)


@check("obj.shared")
def _(c):
    x = Conf.Base("x")
    r = c.obj.opPair(Conf.Pair(x, x))
    expect(r.first is r.second and r.first.b == "x", "first and second are not one instance")


@check("obj.distinct")
def _(c):
    r = c.obj.opPair(Conf.Pair(Conf.Base("a"), derived("b")))
    expect(r.first is not r.second, "distinct instances came back as one")
    eq(r.first.b, "a", "first")
    same_derived(r.second, "b", 4, "second")


@check("obj.seq")
def _(c):
    d = derived()
    r = c.obj.opBaseSeq([Conf.Base("a"), d, None, d])
    eq(len(r), 4, "length")
    eq((type(r[0]), r[0].b), (Conf.Base, "a"), "[0]")
    same_derived(r[1], "d", 4, "[1]")
    expect(r[2] is None, "[2] is not null")
    expect(r[3] is r[1], "[1] and [3] are not one instance")


@check("obj.dict")
def _(c):
    d = derived()
    r = c.obj.opBaseDict({"a": Conf.Base("a"), "b": d, "c": d, "n": None})
    eq(sorted(r), ["a", "b", "c", "n"], "keys")
    eq(r["a"].b, "a", "a")
    same_derived(r["b"], "d", 4, "b")
    expect(r["b"] is r["c"], "b and c are not one instance")
    expect(r["n"] is None, "n is not null")


@check("obj.struct_member")
def _(c):
    r = c.obj.opCarrier(Conf.Carrier("l", derived()))
    eq(r.label, "l", "label")
    same_derived(r.obj, "d", 4, "obj")
    r = c.obj.opCarrier(Conf.Carrier("n", None))
    expect(r.obj is None, "null obj")


@check("obj.value")
def _(c):
    same_derived(c.obj.opValue(derived()), "d", 4, "opValue(Derived)")
    expect(c.obj.opValue(None) is None, "opValue(null)")
    r = c.obj.opValue(Conf.Node(1, None))
    expect(type(r) is Conf.Node and r.value == 1, "opValue(Node) %r" % r)


def all_types(c):
    return Conf.AllTypes(True, 7, -7, 70000, -(1 << 40), 0.5, 1e100, "all", Conf.Color.Green, Conf.Level.High,
                         Conf.Point(9, 8), record(), [4, 5], {"k": "v"}, derived(), c.ops)


@check("obj.all_types")
def _(c):
    a = all_types(c)
    r = c.obj.opAllTypes(a)
    eq((r.b, r.y, r.s, r.i, r.l, r.f, r.d, r.str, r.c, r.lv, r.p, r.r, r.seq, r.dict),
       (a.b, a.y, a.s, a.i, a.l, a.f, a.d, a.str, a.c, a.lv, a.p, a.r, a.seq, a.dict), "members")
    same_derived(r.obj, "d", 4, "obj")
    eq(Ice.identityToString(r.prx.ice_getIdentity()), "ops", "prx")


def nodes(n):
    out = []
    while n is not None and len(out) < 1000:
        out.append(n)
        n = n.next
    return out


@check("obj.chain")
def _(c):
    got = nodes(c.obj.makeChain(10))
    eq([n.value for n in got], list(range(1, 11)), "makeChain(10)")
    chain = Conf.Node(1, Conf.Node(2, Conf.Node(3, None)))
    eq([n.value for n in nodes(c.obj.opNode(chain))], [1, 2, 3], "opNode")
    eq(c.obj.countNodes(chain), 3, "countNodes")


@check("obj.deep_chain")
def _(c):
    # Deeper than Ice.ClassGraphDepthMax (100), in either encoding.
    raises(Ice.MarshalException, c.obj.makeChain, 150)
    eq(len(nodes(c.obj.makeChain(90))), 90, "makeChain(90)")


@check("obj.deep_chain_send")
def _(c):
    raises(Ice.UnknownLocalException, c.obj.countNodes, c.chain(150))
    eq(c.obj.countNodes(c.chain(90)), 90, "countNodes(chain of 90)")


def cycle():
    a = Conf.Node(1, None)
    a.next = Conf.Node(2, a)
    return a


# Ice for C++ (and floe, which follows it) refuses class graphs with cycles
# unless Ice.AcceptClassCycles is set; in encoding 1.0 it only sees an
# instance that refers to itself. Ice for Python (3.7 and 3.8) accepts
# every cycle.
def refuses(kind, c, self_loop=False):
    return kind not in ("python", "python38") and not c.cycles and (self_loop or not c.enc10)


@check("obj.cycle_send")
def _(c):
    if refuses(c.server, c):
        e = raises(Ice.UnknownLocalException, c.obj.countNodes, cycle())
        text = unknown_text(e)
        expect("cycle" in text.lower() or "Marshal" in text, "reason: %s" % text)
    else:
        eq(c.obj.countNodes(cycle()), 2, "countNodes(cycle)")


@check("obj.cycle_return")
def _(c):
    if refuses("python", c):
        raises(Ice.MarshalException, c.obj.makeCycle, 3)
    else:
        n = c.obj.makeCycle(3)
        eq([x.value for x in nodes(n)[:3]], [1, 2, 3], "values")
        expect(n.next.next.next is n, "not a cycle")


@check("obj.cycle_echo")
def _(c):
    n = Conf.Node(5, None)
    n.next = n
    if refuses(c.server, c, self_loop=True):
        raises(Ice.UnknownLocalException, c.obj.opNode, n)
    elif refuses("python", c, self_loop=True):
        raises(Ice.MarshalException, c.obj.opNode, n)
    else:
        r = c.obj.opNode(n)
        expect(r.next is r and r.value == 5, "self-loop")


@check("obj.sliced_format")
def _(c):
    same_derived(c.obj.opBaseSliced(derived()), "d", 4, "opBaseSliced(Derived)")
    eq(c.obj.opBaseSliced(Conf.Base("b")).b, "b", "opBaseSliced(Base)")


# ---------------------------------------------------------------- exceptions

@check("exc.base")
def _(c):
    e = raises(Conf.BaseError, c.exc.throwBase, "r")
    expect(type(e) is Conf.BaseError and e.reason == "r", "%r" % e)


@check("exc.derived")
def _(c):
    e = raises(Conf.BaseError, c.exc.throwDerived, "d", 3)
    expect(type(e) is Conf.DerivedError and (e.reason, e.code) == ("d", 3), "%r" % e)
    eq(e.ice_id(), "::Conf::DerivedError", "ice_id")


@check("exc.derived_declared")
def _(c):
    e = raises(Conf.DerivedError, c.exc.throwDerivedAsDerived, "dd", -3)
    eq((e.reason, e.code), ("dd", -3), "DerivedError")


@check("exc.class_member")
def _(c):
    e = raises(Conf.ClassError, c.exc.throwClassError, derived())
    eq(e.reason, "class", "reason")
    same_derived(e.obj, "d", 4, "obj")
    e = raises(Conf.ClassError, c.exc.throwClassError, None)
    expect(e.obj is None, "null obj")


@check("exc.other")
def _(c):
    e = raises(Ice.UnknownUserException, c.exc.throwOther, 4)
    expect("OtherError" in unknown_text(e), "unknown: %s" % unknown_text(e))


@check("exc.undeclared")
def _(c):
    e = raises(Ice.UnknownUserException, c.exc.throwUndeclared, 4)
    expect("OtherError" in unknown_text(e), "unknown: %s" % unknown_text(e))


@check("exc.non_ice")
def _(c):
    raises(Ice.UnknownException, c.exc.throwNonIce)


@check("exc.not_exist")
def _(c):
    raises(Ice.ObjectNotExistException, c.exc.throwNotExist)


@check("exc.nothing")
def _(c):
    c.exc.throwNothing()


@check("exc.object_not_exist")
def _(c):
    raises(Ice.ObjectNotExistException, c.prx("missing", Conf.OperationsPrx).opVoid)


@check("exc.facet_not_exist")
def _(c):
    raises(Ice.FacetNotExistException, Conf.OperationsPrx.uncheckedCast(c.ops, "nofacet").opVoid)


@check("exc.operation_not_exist")
def _(c):
    raises(Ice.OperationNotExistException, Conf.UnimplementedPrx.uncheckedCast(c.exc).missing)


def sliced_exceptions(c):
    """Whether the server's exceptions come in the sliced format: 1.0
    always writes slice sizes, and Ice 3.8 marshals every exception in the
    sliced format."""
    return c.enc10 or c.server == "python38"


@check("exc.server_derived_compact")
def _(c):
    if sliced_exceptions(c):
        # The client slices to what it knows.
        e = raises(Conf.DerivedError, c.exc.throwServerDerived)
        eq((e.reason, e.code), ("server", 7), "DerivedError")
    elif ICE38:
        # An Ice 3.8 client cannot slice it either, and says so.
        raises(Ice.MarshalException, c.exc.throwServerDerived)
    else:
        e = raises(Ice.UnknownUserException, c.exc.throwServerDerived)


@check("exc.shape_error_compact")
def _(c):
    if sliced_exceptions(c):
        e = raises(Conf.ShapeError, c.exc.throwShapeError)
        expect(type(e.shape) is Conf.Shape and e.shape.name == "c", "shape %r" % e.shape)
    else:
        raises(NoValueFactoryException, c.exc.throwShapeError)


# ---------------------------------------------------------------- sliced exceptions

@check("sexc.server_derived")
def _(c):
    e = raises(Conf.BaseError, c.sexc.throwServerDerived)
    expect(type(e) is Conf.DerivedError and (e.reason, e.code) == ("server", 7), "%r" % e)
    eq(e.ice_id(), "::Conf::DerivedError", "ice_id")


@check("sexc.server_base")
def _(c):
    e = raises(Conf.BaseError, c.sexc.throwServerBase)
    expect(type(e) is Conf.BaseError and e.reason == "server", "%r" % e)


@check("sexc.server_class")
def _(c):
    e = raises(Conf.BaseError, c.sexc.throwServerClass)
    expect(type(e) is Conf.BaseError and e.reason == "classes", "%r" % e)


@check("sexc.shape_error")
def _(c):
    e = raises(Conf.ShapeError, c.sexc.throwShapeError)
    expect(type(e.shape) is Conf.Shape and e.shape.name == "c", "shape %r" % e.shape)


@check("sexc.isolated")
def _(c):
    # Nothing in the exception is known. In 1.1 the last slice says so and
    # the client raises UnknownUserException, except from an Ice 3.7 C++11
    # server, which never flags the last slice of a user exception; 1.0 has
    # no such flag: the client reads past the end. An Ice 3.8 client
    # raises MarshalException in every case.
    if ICE38:
        raises(Ice.MarshalException, c.sexc.throwIsolated)
    elif c.enc10 or c.server == "cpp":
        raises(UnmarshalOutOfBoundsException, c.sexc.throwIsolated)
    else:
        raises(Ice.UnknownUserException, c.sexc.throwIsolated)


@check("sexc.known")
def _(c):
    e = raises(Conf.DerivedError, c.sexc.throwKnown)
    eq((e.reason, e.code), ("known", 9), "DerivedError")


# ---------------------------------------------------------------- sliced objects

def plain_shape(s, name, what):
    expect(type(s) is Conf.Shape, "%s: %r is not a plain Shape" % (what, s))
    eq(s.name, name, what)


@check("sobj.circle")
def _(c):
    plain_shape(c.sobj.getCircle(), "circle", "getCircle")


@check("sobj.ring")
def _(c):
    plain_shape(c.sobj.getRing(), "ring", "getRing")


@check("sobj.compact_id")
def _(c):
    plain_shape(c.sobj.getSquare(), "square", "getSquare")


@check("sobj.unknown")
def _(c):
    if c.enc10:
        raises(NoValueFactoryException, c.sobj.getHidden)
    else:
        v = c.sobj.getHidden()
        expect(isinstance(v, Ice.UnknownSlicedValue), "%r is not an UnknownSlicedValue" % v)
        eq(v.ice_id(), "::Conf::Hidden", "ice_id")


@check("sobj.linked")
def _(c):
    r, other = c.sobj.getLinked()
    plain_shape(r, "c", "returned")
    plain_shape(other, "s2", "other")


@check("sobj.seq")
def _(c):
    s = c.sobj.getShapes()
    eq(len(s), 5, "length")
    plain_shape(s[0], "c", "[0]")
    plain_shape(s[1], "plain", "[1]")
    expect(s[2] is s[0], "[0] and [2] are not one instance")
    expect(s[3] is None, "[3] is not null")
    plain_shape(s[4], "ring", "[4]")


@check("sobj.dict")
def _(c):
    d = c.sobj.getShapeDict()
    eq(sorted(d), [1, 2, 3], "keys")
    plain_shape(d[1], "c", "1")
    expect(d[1] is d[2], "1 and 2 are not one instance")
    plain_shape(d[3], "plain", "3")


@check("sobj.preserved")
def _(c):
    k = c.sobj.getKeeper()
    expect(type(k) is Conf.Keeper and k.k == "keeper", "getKeeper %r" % k)
    want = "Keeper:keeper" if c.enc10 else "KeeperDerived:keeper:x:kb:kl"
    eq(c.sobj.checkKeeper(k), want, "checkKeeper")


@check("sobj.not_preserved")
def _(c):
    # In 1.1 an Ice 3.8 client keeps the unknown slices of every class
    # (Ice 3.8 has no ["preserve-slice"]): the server gets the Circle back.
    want = "::Conf::Circle:circle" if ICE38 and not c.enc10 else "::Conf::Shape:circle"
    eq(c.sobj.checkShape(c.sobj.getCircle()), want, "checkShape(getCircle())")


@check("sobj.known_derived")
def _(c):
    same_derived(c.sobj.getDerived(), "d", 5, "getDerived")


@check("sobj.unknown_optionals")
def _(c):
    w = c.sobj.getMoreOptionals()
    expect(type(w) is Conf.WithOptionals, "%r is not a plain WithOptionals" % w)
    eq((w.req, w.i, w.s), (1, UNSET if c.enc10 else 2, UNSET), "members")


@check("cobj.circle")
def _(c):
    if c.enc10:
        plain_shape(c.cobj.getCircle(), "circle", "getCircle in 1.0")
    else:
        raises(NoValueFactoryException, c.cobj.getCircle)


@check("cobj.unknown")
def _(c):
    raises(NoValueFactoryException, c.cobj.getHidden)


@check("cobj.circle_sliced")
def _(c):
    plain_shape(c.cobj.getCircleSliced(), "circle", "getCircleSliced")


@check("cobj.known_derived")
def _(c):
    same_derived(c.cobj.getDerived(), "d", 5, "getDerived")


# ---------------------------------------------------------------- driver

# name, encoding 1.0?, cycles accepted?, check-name prefixes run
# ---------------------------------------------------------------- relayed exceptions


@check("relay.preserved")
def _(c):
    if c.enc10 or c.server == "python38":
        # 1.0 has no preserved slices, Ice 3.8 no preserved exception
        # slices: the server relays what it knows.
        e = raises(Conf.PreservedError, c.relaying.relayPreserved, c.relay)
        eq((e.ice_id(), e.p), ("::Conf::PreservedError", "pres"), "PreservedError")
    else:
        e = raises(Conf.ClientPreservedError, c.relaying.relayPreserved, c.relay)
        eq((e.p, e.extra, e.obj and e.obj.b), ("pres", "extra", "rb"), "ClientPreservedError")


@check("relay.unpreserved")
def _(c):
    e = raises(Conf.DerivedError, c.relaying.relayUnpreserved, c.relay)
    eq((e.ice_id(), e.reason, e.code), ("::Conf::DerivedError", "plain", 3), "DerivedError")


# ---------------------------------------------------------------- facets and default servants


@check("facet.default")
def _(c):
    eq(c.facet("fct").which(), "fct:fct:", "fct")


@check("facet.named")
def _(c):
    eq(c.facet("fct", "b").which(), "fct-b:fct:b", "fct -f b")


@check("facet.fallback")
def _(c):
    # fct has no facet x: the default servant of category "" answers.
    eq(c.facet("fct", "x").which(), "any:fct:x", "fct -f x")


@check("facet.category_default")
def _(c):
    eq(c.facet("dflt/n").which(), "dflt:n:", "dflt/n")
    eq(c.facet("dflt/n", "x").which(), "dflt:n:x", "dflt/n -f x")


@check("facet.any_default")
def _(c):
    p = c.facet("locate", "x")
    p.ice_ping()
    eq(p.which(), "any:locate:x", "locate -f x")


# ---------------------------------------------------------------- servant locators


@check("loc.category")
def _(c):
    eq(c.located("loc/a").whoAmI(), "loc/a", "loc/a")


@check("loc.default_category")
def _(c):
    eq(c.located("any-x").whoAmI(), "/any-x", "any-x")


@check("loc.missing")
def _(c):
    raises(Ice.ObjectNotExistException, c.located("loc/missing").ice_ping)
    raises(Ice.ObjectNotExistException, c.located("nobody").whoAmI)


@check("loc.cookie")
def _(c):
    c.located("loc/a").whoAmI()
    eq(c.located("loc/stats").lastFinished(), "cookie:loc/a", "lastFinished")


@check("loc.locate_user")
def _(c):
    e = raises(Conf.LocatorError, c.located("loc/locate-user").op)
    eq(e.where, "locate", "where")
    raises(Ice.UnknownUserException, c.located("loc/locate-user").whoAmI)


@check("loc.locate_not_exist")
def _(c):
    raises(Ice.ObjectNotExistException, c.located("loc/locate-not-exist").whoAmI)


@check("loc.locate_local")
def _(c):
    raises(Ice.UnknownLocalException, c.located("loc/locate-local").whoAmI)


@check("loc.locate_other")
def _(c):
    e = raises(Ice.UnknownException, c.located("loc/locate-other").whoAmI)
    eq(type(e).__name__, "UnknownException", "type")


@check("loc.servant_user")
def _(c):
    e = raises(Conf.LocatorError, c.located("loc/servant-user").op)
    eq(e.where, "servant", "where")
    eq(c.located("loc/stats").lastFinished(), "cookie:loc/servant-user", "lastFinished")


@check("loc.finished_user")
def _(c):
    e = raises(Conf.LocatorError, c.located("loc/finished-user").op)
    eq(e.where, "finished", "where")


@check("loc.finished_not_exist")
def _(c):
    raises(Ice.ObjectNotExistException, c.located("loc/finished-not-exist").whoAmI)


@check("loc.finished_local")
def _(c):
    raises(Ice.UnknownLocalException, c.located("loc/finished-local").whoAmI)


@check("loc.finished_other")
def _(c):
    e = raises(Ice.UnknownException, c.located("loc/finished-other").whoAmI)
    eq(type(e).__name__, "UnknownException", "type")


@check("loc.deactivate")
def _(c):
    eq(c.located("loc/stats").destroyAdapter(), "gone", "destroyAdapter")


# ---------------------------------------------------------------- value factories


class MarkerI(getattr(Conf, "Marker", object)):
    """Ice 3.8: what its value factory (slice loader) makes of a ::Conf::Marker."""


@check("vf.interface_by_value")
def _(c):
    # A communicator of its own, with a factory for ::Conf::Marker. Ice
    # 3.8 passes no interface by value: its Slice has a class Marker, the
    # same on the wire, and its factory makes a MarkerI.
    if ICE38:
        other = initialize({}, {Conf.Marker.ice_staticId(): MarkerI})
    else:
        other = Ice.initialize([])
    try:
        if ICE38:
            v = c.prx_on(other, "vf", Conf.ValuesPrx).getMarker()
            expect(isinstance(v, MarkerI), "not made by the factory: %r" % (v,))
        else:
            other.getValueFactoryManager().add(lambda t: Ice.InterfaceByValue(t), Conf.Marker.ice_staticId())
            v = c.prx_on(other, "vf", Conf.ValuesPrx).getMarker()
            expect(isinstance(v, Ice.InterfaceByValue), "not an InterfaceByValue: %r" % (v,))
        eq(v.ice_id(), "::Conf::Marker", "ice_id")
    finally:
        other.destroy()


@check("vf.hooks_returned")
def _(c):
    h = c.vf.getHooked()
    expect(isinstance(h, HookedI), "not made by the factory: %r" % (h,))
    eq((h.preMarshalled, h.postUnmarshalled), (True, True), "(preMarshalled, postUnmarshalled)")


@check("vf.hooks_sent")
def _(c):
    eq(c.vf.checkHooked(HookedI(False, False)), "true:true", "checkHooked")


# ---------------------------------------------------------------- classes with operations


@check("cls.ops")
def _(c):
    p = c.prx("cls", Conf.LoudGreeterPrx)
    eq(p.greet("x"), "hello, x", "greet")
    eq(p.shout("hey"), "HEY!", "shout")


@check("cls.type_ids")
def _(c):
    p = c.prx("cls", Conf.LoudGreeterPrx)
    eq(p.ice_ids(), ["::Conf::Greeter", "::Conf::LoudGreeter", "::Ice::Object"], "ice_ids")
    eq(p.ice_id(), "::Conf::LoudGreeter", "ice_id")


@check("cls.checked_cast")
def _(c):
    g = Conf.GreeterPrx.checkedCast(c.prx("cls", Conf.GreeterPrx))
    expect(g is not None, "checkedCast to GreeterPrx")
    eq(g.greet("y"), "hello, y", "greet")


# ---------------------------------------------------------------- overridden built-in operations


@check("bi.ping")
def _(c):
    p = c.prx("obs", Conf.ObservedPrx)
    p.pings()
    p.ice_ping()
    p.ice_ping()
    # Ice 3.8 sends ice_ping as Idempotent (2), Ice 3.7 as Nonmutating (1).
    eq(p.pings(), "2:2" if ICE38 else "2:1", "pings (Idempotent)" if ICE38 else "pings (Nonmutating)")


@check("bi.is_a")
def _(c):
    p = c.prx("obs", Conf.ObservedPrx)
    eq(p.ice_isA("::Conf::Extra"), True, "ice_isA(::Conf::Extra)")
    eq(p.ice_isA("::Conf::Observed"), True, "ice_isA(::Conf::Observed)")
    eq(p.ice_isA("::Conf::Nope"), False, "ice_isA(::Conf::Nope)")


@check("bi.ids")
def _(c):
    p = c.prx("obs", Conf.ObservedPrx)
    eq(p.ice_ids(), ["::Conf::Extra", "::Conf::Observed", "::Ice::Object"], "ice_ids")
    eq(p.ice_id(), "::Conf::Observed", "ice_id")


# ---------------------------------------------------------------- adapter deactivation


@check("deact.from_servant")
def _(c):
    d = c.prx("deact", Conf.DeactivationPrx)
    own = d.create().ice_encodingVersion(c.prx("deact", Conf.DeactivationPrx).ice_getEncodingVersion())
    own.ice_ping()
    own.deactivateSelf()
    eq(d.waitDeactivated(), True, "waitDeactivated")
    raises(Ice.LocalException, own.ice_ping)


# ---------------------------------------------------------------- optional classes and proxies: null vs unset


def null_state(v):
    return "unset" if v is UNSET else ("null" if v is None else "set")


@check("optn.sent")
def _(c):
    not_in_ice38("optional classes")
    p = c.prx("optn", Conf.OptionalNullsPrx)
    ops = c.prx("ops", Conf.OperationsPrx)
    for state, b, o in [("unset", UNSET, UNSET), ("null", None, None), ("set", Conf.Base("s"), ops)]:
        want = "unset:unset" if c.enc10 else "%s:%s" % (state, state)
        eq(p.describe(b, o), want, "describe(%s)" % state)


@check("optn.returned")
def _(c):
    not_in_ice38("optional classes")
    p = c.prx("optn", Conf.OptionalNullsPrx)
    for state in ["unset", "null", "set"]:
        b, o = p.make(state)
        want = "unset" if c.enc10 else state
        eq((null_state(b), null_state(o)), (want, want), "make(%s)" % state)


# ---------------------------------------------------------------- connection info


def server_timeout(c):
    """How the server writes its endpoint's timeout in Info::endpointInfo:
    60000 (Ice 3.7's default), or none from an Ice 3.8 server, whose
    endpoints have no timeout."""
    return "none" if c.server == "python38" else "60000"


@check("info.endpoint")
def _(c):
    p = c.prx("info", Conf.InfoPrx)
    port = p.ice_getEndpoints()[0].getInfo().port
    info = p.ice_getConnection().getEndpoint().getInfo()
    kind = "tcp" if info.type() == Ice.TCPEndpointType else str(info.type())
    if ICE38:
        # Ice 3.8's endpoints have no timeout.
        eq((kind, info.host, info.port, info.compress), ("tcp", "127.0.0.1", port, False), "the client's endpoint")
    else:
        eq((kind, info.host, info.port, info.timeout, info.compress), ("tcp", "127.0.0.1", port, 10000, False),
           "the client's endpoint")
    eq(p.endpointInfo(), "tcp:127.0.0.1:%d:%s:false" % (port, server_timeout(c)), "the server's endpoint")


CONFIGS = [
    ("1.1", False, False, None),
    ("1.0", True, False, None),
    ("1.1-cycles", False, True, ("obj.",)),
    ("1.0-cycles", True, True, ("obj.",)),
]


def main():
    port, cycles_port, facets_port = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    server = sys.argv[5]
    passed = failed = 0
    factories = {Conf.Hooked.ice_staticId(): HookedI}
    plain = initialize({}, factories)
    cyc = initialize({"Ice.AcceptClassCycles": "1"}, factories)
    relays = {id(plain): relay_proxy(plain), id(cyc): relay_proxy(cyc)}
    try:
        for name, enc10, cycles, only in CONFIGS:
            communicator = cyc if cycles else plain
            ctx = Ctx(communicator, cycles_port if cycles else port, facets_port, enc10, cycles, server,
                      relays[id(communicator)])
            for check_name, fn in CHECKS:
                if only and not check_name.startswith(only):
                    continue
                try:
                    fn(ctx)
                    passed += 1
                    print("PASS %s/%s" % (name, check_name), flush=True)
                except Failed as e:
                    failed += 1
                    print("FAIL %s/%s: %s" % (name, check_name, " ".join(str(e).split())), flush=True)
                except Exception as e:  # noqa: BLE001
                    failed += 1
                    detail = "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:300])
                    print("FAIL %s/%s: unexpected %s" % (name, check_name, detail), flush=True)
    finally:
        plain.destroy()
        cyc.destroy()
    print("SUMMARY %d passed, %d failed" % (passed, failed), flush=True)
    sys.exit(0 if failed == 0 else 1)


main()
