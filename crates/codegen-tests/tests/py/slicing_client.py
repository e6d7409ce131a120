# A Python Ice 3.7 client that knows only SlicingBase.ice (no Derived, no
# DerivedError): what it receives from a server that sends those types.
# Usage: slicing_client.py <SlicingBase.ice> <port>; prints one line per
# check, "name: result", then "done".
import sys

import Ice

Ice.loadSlice(sys.argv[1])
import Slicing  # noqa: E402


def outcome(call):
    try:
        r = call()
        if isinstance(r, Slicing.Base):
            return "Base(b=%s, type=%s)" % (r.b, r.ice_id())
        return "returned %r" % (r,)
    except Slicing.BaseError as e:
        return "BaseError(reason=%s, type=%s)" % (e.reason, e.ice_id())
    except Ice.Exception as e:
        return type(e).__name__


def main():
    with Ice.initialize(sys.argv[:1]) as communicator:
        port = sys.argv[2]
        sliced = Slicing.SlicedServerPrx.uncheckedCast(
            communicator.stringToProxy("sliced:tcp -h 127.0.0.1 -p %s -t 10000" % port))
        compact = Slicing.CompactServerPrx.uncheckedCast(
            communicator.stringToProxy("compact:tcp -h 127.0.0.1 -p %s -t 10000" % port))
        print("sliced.derivedAsBase: " + outcome(sliced.derivedAsBase))
        print("sliced.throwDerived: " + outcome(sliced.throwDerived))
        print("compact.derivedAsBase: " + outcome(compact.derivedAsBase))
        print("compact.throwDerived: " + outcome(compact.throwDerived))
        print("compact.slicedDerivedAsBase: " + outcome(compact.slicedDerivedAsBase))
        print("done", flush=True)


main()
