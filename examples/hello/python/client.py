# The hello client in Python (Ice 3.7): it talks to the floe server.
#   python3 examples/hello/python/client.py [--Hello.Proxy="hello:tcp -h 127.0.0.1 -p 10000"] [--shutdown]
import os
import sys

import Ice

# HELLO_SLICE names another Slice file for Demo::Hello (hello_derive's export).
Ice.loadSlice(os.environ.get("HELLO_SLICE") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "slice", "Hello.ice"))
import Demo  # noqa: E402

with Ice.initialize(sys.argv) as communicator:
    # --Hello.* options set properties too, as floe's Communicator::from_args does.
    communicator.getProperties().parseCommandLineOptions("Hello", sys.argv)
    text = communicator.getProperties().getPropertyWithDefault(
        "Hello.Proxy", "hello:tcp -h 127.0.0.1 -p 10000")
    hello = Demo.HelloPrx.checkedCast(communicator.stringToProxy(text))
    if not hello:
        sys.exit("the object is not a ::Demo::Hello")
    hello.sayHello(0)
    hello.ice_oneway().sayHello(0)
    batch = hello.ice_batchOneway()
    batch.sayHello(0)
    batch.sayHello(0)
    batch.ice_flushBatchRequests()
    print("said hello 4 times", flush=True)
    if "--shutdown" in sys.argv:
        hello.shutdown()
