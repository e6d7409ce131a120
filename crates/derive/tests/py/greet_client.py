# A Python Ice 3.7 client for a floe server built from the Rust-first
# `Greeter` trait of tests/python_client.rs. The Slice it uses was exported
# from the Rust trait and compiled with the real slice2py.
# Usage: greet_client.py <dir with the slice2py output> <port>; prints "ok".
import sys

sys.path.insert(0, sys.argv[1])

import Ice  # noqa: E402
import PyGreet  # noqa: E402  (slice2py output of the exported .ice)


def main():
    with Ice.initialize(sys.argv[:1]) as communicator:
        base = communicator.stringToProxy("greeter:tcp -h 127.0.0.1 -p %s -t 10000" % sys.argv[2])
        g = PyGreet.GreeterPrx.checkedCast(base)
        assert g is not None, "checkedCast failed"
        assert g.ice_id() == "::PyGreet::Greeter", g.ice_id()
        assert g.greet("py", 3) == "hello py x3", g.greet("py", 3)
        assert g.greet("py", Ice.Unset) == "hello py x1"
        try:
            g.greet("", Ice.Unset)
            raise AssertionError("greet('') did not raise")
        except PyGreet.Oops as e:
            assert e.reason == "no name", e
        pts = [PyGreet.Point(1, 2), PyGreet.Point(3, 4)]
        assert g.sum(pts) == 10
        assert g.maybe(True) == "here"
        assert g.maybe(False) is Ice.Unset
        assert g.bytesLen(b"\x01\x02\x03") == 3
        assert g.color(PyGreet.Color.blue) == PyGreet.Color.green
        g.nothing()

        # Fancy extends Greeter (a Rust supertrait), with out-parameters and
        # a derived exception.
        base = communicator.stringToProxy("fancy:tcp -h 127.0.0.1 -p %s -t 10000" % sys.argv[2])
        f = PyGreet.FancyPrx.checkedCast(base)
        assert f is not None, "checkedCast to Fancy failed"
        assert PyGreet.GreeterPrx.checkedCast(base) is not None
        ids = f.ice_ids()
        assert ids == ["::Ice::Object", "::PyGreet::Fancy", "::PyGreet::Greeter"], ids
        assert f.greet("base", 2) == "hello base x2"
        assert f.split("ab") == (2, "AB"), f.split("ab")
        assert f.pair(4) == (8, "4"), f.pair(4)
        try:
            f.split("")
            raise AssertionError("split('') did not raise")
        except PyGreet.Oops as e:
            assert isinstance(e, PyGreet.Worse), e
            assert e.reason == "empty" and e.code == 7, e
    print("ok")


main()
